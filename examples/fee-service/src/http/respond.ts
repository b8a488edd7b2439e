import { randomUUID } from 'node:crypto';
import type { RouteResult } from './types';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's `X-Request-Id` when well formed (as the gate accepts it), else a new UUID. */
export function requestIdOf(header: (name: string) => string | undefined): string {
  const incoming = header('x-request-id');
  return incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * A JSON body already encoded: the mounts send its text as UTF-8 without encoding it again (a
 * cached response is written as is; a JSON string is written with the header in one chunk).
 * @example { status: 200, body: new EncodedJson(JSON.stringify(document)) }
 */
export class EncodedJson {
  constructor(readonly text: string) {}
}

/** Error codes the service itself answers with (the gate's own codes are in `@tollbooth/core`). */
export const SERVICE_ERROR_CODES = {
  no_validated_snapshot: 'No validated fee snapshot is recent enough to serve.',
  not_implemented: 'This paid resource is listed but not implemented yet; nothing was charged.',
  not_found: 'No such endpoint.',
  payment_not_settled: 'The payment has no confirmed settlement; nothing was served.',
  internal_error: 'An unexpected failure; nothing was charged.',
} as const;
export type ServiceErrorCode = keyof typeof SERVICE_ERROR_CODES;

/**
 * The seed's Error body (section 2.3) as a route result.
 * @example errorResult({ status: 503, code: 'no_validated_snapshot', requestId, retryable: true })
 */
export function errorResult(options: {
  status: number;
  code: ServiceErrorCode;
  requestId: string;
  retryable: boolean;
  message?: string;
  headers?: Record<string, string>;
}): RouteResult {
  return {
    status: options.status,
    headers: { 'cache-control': 'no-store', 'x-request-id': options.requestId, ...options.headers },
    body: {
      error: {
        code: options.code,
        message: options.message ?? SERVICE_ERROR_CODES[options.code],
        request_id: options.requestId,
        retryable: options.retryable,
      },
    },
  };
}
