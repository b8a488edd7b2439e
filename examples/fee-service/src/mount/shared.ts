import type { GateResponse } from '@tollbooth/core';
import { EncodedJson, errorResult, requestIdOf } from '../http/respond';
import type { RouteResult } from '../http/types';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * A route result as status, headers and exact bytes (JSON encoded unless already bytes or
 * encoded JSON text). Headers and a `Buffer` or text body are passed through as they are (a cached
 * result is sent without copying); a JSON body gets a content type, in a new header object if the
 * result has none.
 */
export function encodeResult(result: RouteResult): {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: Buffer | string | undefined;
} {
  const { status, body } = result;
  if (body === undefined) return { status, headers: result.headers ?? {}, body: undefined };
  if (body instanceof Uint8Array) {
    return {
      status,
      headers: result.headers ?? {},
      body: Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength),
    };
  }
  const headers =
    result.headers?.['content-type'] === undefined
      ? { ...result.headers, 'content-type': JSON_CONTENT_TYPE }
      : result.headers;
  if (body instanceof EncodedJson) return { status, headers, body: body.text };
  return { status, headers, body: JSON.stringify(body) };
}

const NO_BODY = new Uint8Array(0);

/** A route result as the gate sends a response of its own (a route precondition's answer). */
export function toGateResponse(result: RouteResult): GateResponse {
  const { status, headers, body } = encodeResult(result);
  return {
    status,
    headers: { ...headers },
    body: body === undefined ? NO_BODY : typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
  };
}

/** 404 Error body for unknown paths. */
export function notFound(header: (name: string) => string | undefined): RouteResult {
  return errorResult({ status: 404, code: 'not_found', requestId: requestIdOf(header), retryable: false });
}

/** What a handler failure answers: 503 (fail closed, never a 500 from client input). */
export function internalError(header: (name: string) => string | undefined): RouteResult {
  return errorResult({
    status: 503,
    code: 'internal_error',
    requestId: requestIdOf(header),
    retryable: true,
  });
}

/** `Retry-After` seconds of a rate-limited request. */
export function retryAfterSeconds(windowMs: number): string {
  return String(Math.max(1, Math.ceil(windowMs / 1000)));
}

/** Where one limit stands for a request, as every mount's rate-limit library reports it. */
export interface RateLimitStanding {
  /** The limit's name: `paid` (the edge limit) or a resource's own (`ai`, `x402-demo`). */
  name: string;
  /** Requests per window. */
  limit: number;
  windowMs: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/**
 * The IETF rate-limit fields of one limit (draft-ietf-httpapi-ratelimit-headers, structured
 * fields): `RateLimit-Policy: "paid";q=60;w=60` and `RateLimit: "paid";r=59;t=60`. Every mount
 * writes exactly these through {@link appendRateLimitFields}, on every answer a limit counted (the
 * 429 included), so a client reads one set of headers whatever the framework.
 */
export function rateLimitFields(standing: RateLimitStanding): { policy: string; limit: string } {
  const name = standing.name.replace(/["\\]/g, '');
  return {
    policy: `"${name}";q=${standing.limit};w=${Math.max(1, Math.ceil(standing.windowMs / 1000))}`,
    limit: `"${name}";r=${Math.max(0, standing.remaining)};t=${Math.max(0, Math.ceil(standing.resetSeconds))}`,
  };
}

/** Adds one limit's fields to an answer (a second limit joins the same two fields as a list). */
export function appendRateLimitFields(
  target: { get(name: string): unknown; set(name: string, value: string): void },
  standing: RateLimitStanding,
): void {
  const fields = rateLimitFields(standing);
  for (const [header, value] of [
    ['ratelimit-policy', fields.policy],
    ['ratelimit', fields.limit],
  ] as const) {
    const existing = target.get(header);
    target.set(header, typeof existing === 'string' && existing !== '' ? `${existing}, ${value}` : value);
  }
}
