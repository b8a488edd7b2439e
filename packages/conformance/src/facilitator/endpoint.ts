// The facilitator under audit, as its HTTP API: every call is timed per endpoint, and a failure to
// reach it is its own error (the run stops there), never a failed audit.
import { AuditFailure } from '../audit-failure';

/** The three endpoints of the facilitator HTTP API. */
export type FacilitatorEndpointName = 'supported' | 'verify' | 'settle';

/** One answer of the facilitator, as the audits judge it. */
export interface FacilitatorAnswer {
  status: number;
  text: string;
  /** The parsed body, or `undefined` when it is not JSON. */
  json: unknown;
  /** Wall-clock time of the request, in milliseconds. */
  ms: number;
}

/** The facilitator could not be reached at all (refused, reset, timed out, bad address). */
export class FacilitatorUnreachable extends Error {
  override readonly name = 'FacilitatorUnreachable';
  readonly code = 'facilitator_unreachable';
}

export interface FacilitatorEndpointOptions {
  /** Base URL, e.g. `http://127.0.0.1:4022` (the endpoints are `<url>/verify` and so on). */
  url: string;
  /** Extra headers on every request, e.g. `{ authorization: 'Bearer …' }`. */
  headers?: Record<string, string>;
  /** Per-request limit. Default 60 000 ms (a settlement waits for its receipt). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface FacilitatorEndpoint {
  readonly url: string;
  supported(): Promise<FacilitatorAnswer>;
  verify(body: unknown): Promise<FacilitatorAnswer>;
  settle(body: unknown): Promise<FacilitatorAnswer>;
  /** Sends a raw body (malformed-body audits). */
  post(name: 'verify' | 'settle', body: string): Promise<FacilitatorAnswer>;
  /** Milliseconds of every call so far, per endpoint. */
  readonly timings: Readonly<Record<FacilitatorEndpointName, number[]>>;
}

/** Why a request failed, in one line (`connect ECONNREFUSED 127.0.0.1:4022`). */
export function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const inner = cause instanceof Error ? cause : error;
  if (inner instanceof Error) {
    if (inner.name === 'TimeoutError' || inner.name === 'AbortError') return 'no answer in time';
    return inner.message || inner.name;
  }
  return String(inner);
}

export function createFacilitatorEndpoint(options: FacilitatorEndpointOptions): FacilitatorEndpoint {
  const base = options.url.replace(/\/+$/, '');
  const fetchFn = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const timings: Record<FacilitatorEndpointName, number[]> = { supported: [], verify: [], settle: [] };

  async function call(name: FacilitatorEndpointName, body?: string): Promise<FacilitatorAnswer> {
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      response = await fetchFn(`${base}/${name}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new FacilitatorUnreachable(`${base}/${name}: ${describeNetworkError(error)}`);
    }
    const ms = performance.now() - started;
    timings[name].push(ms);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, text, json, ms };
  }

  return {
    url: base,
    supported: () => call('supported'),
    verify: (body) => call('verify', JSON.stringify(body, bigintsAsStrings)),
    settle: (body) => call('settle', JSON.stringify(body, bigintsAsStrings)),
    post: (name, body) => call(name, body),
    timings,
  };
}

const bigintsAsStrings = (_key: string, value: unknown) =>
  typeof value === 'bigint' ? value.toString() : value;

/** The body of an answer as a JSON object, failing the audit otherwise. */
export function objectOf(answer: FacilitatorAnswer, what: string): Record<string, unknown> {
  if (typeof answer.json !== 'object' || answer.json === null || Array.isArray(answer.json)) {
    throw new AuditFailure(
      `${what} answered ${answer.status} with a body that is not a JSON object: ${answer.text.slice(0, 200)}`,
    );
  }
  return answer.json as Record<string, unknown>;
}
