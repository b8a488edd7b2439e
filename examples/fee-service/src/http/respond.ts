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

/** How an error code answers: its HTTP status, whether retrying can help, and what it means. */
export interface ErrorCodeSpec {
  status: number;
  retryable: boolean;
  description: string;
}

/**
 * Error codes the service answers on every route (the gate's own codes are in `@tollbooth/core`;
 * each resource declares its own in its folder). Documented in `docs/fee-service-contract.md`.
 */
export const SERVICE_ERROR_CODES = {
  invalid_request: {
    status: 400,
    retryable: false,
    description:
      "A path parameter, the query or the body is invalid by the resource's schema; refused before any payment challenge.",
  },
  payload_too_large: {
    status: 413,
    retryable: false,
    description:
      'The request body is larger than the service reads (1 MiB); refused before any payment challenge.',
  },
  not_found: { status: 404, retryable: false, description: 'No such endpoint.' },
  internal_error: {
    status: 503,
    retryable: true,
    description:
      'An unexpected failure. A paid request: retry the exact same payment payload (never charged twice; it gets the paid answer if the payment was settled).',
  },
} as const satisfies Record<string, ErrorCodeSpec>;
export type ServiceErrorCode = keyof typeof SERVICE_ERROR_CODES;

/**
 * The Error body (docs/fee-service-contract.md#error) as a route result.
 * @example errorResult({ status: 503, code: 'internal_error', requestId, retryable: true })
 */
export function errorResult(options: {
  status: number;
  /** A {@link ServiceErrorCode} or a code a resource declares. */
  code: string;
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
        message:
          options.message ??
          (SERVICE_ERROR_CODES as Record<string, ErrorCodeSpec>)[options.code]?.description ??
          options.code,
        request_id: options.requestId,
        retryable: options.retryable,
      },
    },
  };
}
