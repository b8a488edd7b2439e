import type { PaidRequest } from '@tollbooth/core';

/**
 * The framework-neutral HTTP contract of the fee service: a route is a method, a path and a
 * handler from a request context to a plain result. The Fastify, Express and Koa mounts only
 * translate (see `src/mount`).
 */

/** What a handler sees of a request. */
export interface RouteContext {
  /** Upper-case method. */
  method: string;
  /** The request URL as received, made absolute with the request's own scheme and host. */
  url: URL;
  /** The request target exactly as received (origin-form path and query, not decoded). */
  target: string;
  /** Values of the route's `:params`, decoded by the framework. */
  params: Record<string, string>;
  /** Case-insensitive header lookup. */
  header(name: string): string | undefined;
  /** Request id echoed in Error bodies (the gate's on paid routes). */
  requestId: string;
  /** The accepted payment on paid routes (with `settlement` when the route settles first). */
  payment: PaidRequest | undefined;
  /**
   * The request body, read once and kept (a paid route's precondition reads it before any challenge).
   * @throws RequestBodyTooLargeError past {@link MAX_REQUEST_BODY_BYTES}
   */
  readBody(): Promise<Buffer>;
  /**
   * What the paid route's precondition parsed of this request before the challenge (kept on it,
   * `keepParsedInput`), so the handler neither reads nor validates it again; undefined when it
   * parsed nothing. Absent where no precondition ran (an MCP tool's request).
   */
  parsedInput?(): unknown;
}

/** Largest request body the service reads: a broadcast's 800,000 hex characters fit with room. */
export const MAX_REQUEST_BODY_BYTES = 1_048_576;

/** What a handler answers: JSON (any value) or exact bytes. Header names lower-case. */
export interface RouteResult {
  status: number;
  headers?: Record<string, string>;
  /**
   * A `Uint8Array` is sent as is; an `EncodedJson` as its text; `undefined` sends no body;
   * anything else is JSON.
   */
  body?: unknown;
}

/** One route of the service. */
export interface ServiceRoute {
  method: 'GET' | 'POST';
  /** Path with `:param` segments, e.g. `/api/v1/ai/explain/transaction/:txid`. */
  path: string;
  handler(context: RouteContext): RouteResult | Promise<RouteResult>;
}

/** A request as the rate limits in front of the payment gate see it, on every mount. */
export interface EdgeRequest {
  method: string;
  /** The request target exactly as received (origin-form path and query, not decoded). */
  target: string;
}

/**
 * What runs in front of the payment gate on every mount: the rate limits. A paid resource's
 * precondition (the decision answers 503 before any challenge when no validated snapshot exists)
 * and its input validation are the gate's route precondition, after the gate's own match.
 */
export interface Edge {
  /** Whether the request goes to a paid route (rate limited before the gate): `TollboothGate.isPaid`. */
  isPaid(request: EdgeRequest): boolean;
  /** The name of the resource's own rate limit, when its resource declares one. */
  ownLimit(request: EdgeRequest): string | undefined;
  /**
   * The request the limits judge: the request itself, or for a tools/call POSTed to `/mcp` the
   * tool's (`TOOL /<name>`, counted under its HTTP twin's limits), read from the body (kept for the
   * handler). A promise only when the body must be read.
   */
  resolve(request: EdgeRequest, readBody: () => Promise<Buffer>): EdgeRequest | Promise<EdgeRequest>;
}

/** A named rate limit of its own that a resource declares (the x402 demo, the AI routes). */
export interface NamedRateLimit {
  name: string;
  /** Requests per window and client address. */
  max: number;
  windowMs: number;
  /**
   * Applies even with the edge rate limit off (`RATE_LIMIT_ENABLED=false`): for a free resource
   * that spends something on every request (the x402 demo asks the facilitator's /verify).
   */
  always?: boolean;
}
