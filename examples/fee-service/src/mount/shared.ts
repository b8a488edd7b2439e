import { errorResult, requestIdOf } from '../http/respond';
import type { RouteResult } from '../http/types';

/** A route result as status, headers and exact bytes (JSON encoded unless already bytes). */
export function encodeResult(result: RouteResult): {
  status: number;
  headers: Record<string, string>;
  body: Buffer | undefined;
} {
  const headers: Record<string, string> = { ...result.headers };
  if (result.body === undefined) return { status: result.status, headers, body: undefined };
  if (result.body instanceof Uint8Array) {
    return {
      status: result.status,
      headers,
      body: Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength),
    };
  }
  headers['content-type'] ??= 'application/json; charset=utf-8';
  return { status: result.status, headers, body: Buffer.from(JSON.stringify(result.body), 'utf8') };
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
