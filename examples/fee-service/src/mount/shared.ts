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
