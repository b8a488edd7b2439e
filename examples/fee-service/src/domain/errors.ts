/**
 * Error codes of the fee domain, upstream adapters and snapshot store, declared as data. Each
 * code belongs to exactly one error class; `retryable` says whether trying again later can help.
 * The HTTP layer maps codes to statuses (NO_VALIDATED_SNAPSHOT and UPSTREAM_* → 503,
 * BROADCAST_REJECTED → 400).
 */
export const FEE_ERROR_CODES = {
  UPSTREAM_TIMEOUT: 'The upstream did not answer within the timeout.',
  UPSTREAM_UNAVAILABLE:
    'The upstream is temporarily unavailable (network failure, 5xx, or 503 "Service Unavailable" while out of sync).',
  UPSTREAM_RATE_LIMITED: 'The upstream answered 429; back off before retrying.',
  UPSTREAM_NOT_FOUND: 'The upstream does not know the block or transaction asked for (404).',
  UPSTREAM_HTTP_ERROR: 'The upstream refused the request with a 4xx status.',
  UPSTREAM_INVALID_RESPONSE: 'The upstream answered with a body of the wrong shape.',
  UPSTREAM_CIRCUIT_OPEN:
    'Calls to the upstream are suspended after repeated failures (circuit breaker open).',
  CORE_RPC_ERROR: 'Bitcoin Core answered a JSON-RPC error.',
  BROADCAST_REJECTED:
    'The node rejected the transaction (decode failure, missing inputs, policy, already confirmed).',
  SNAPSHOT_INVALID: 'An upstream snapshot failed validation and was discarded.',
  NO_VALIDATED_SNAPSHOT: 'No validated snapshot is recent enough to serve.',
} as const;
export type FeeErrorCode = keyof typeof FEE_ERROR_CODES;

/** Base class of every error of the fee domain: a stable `code` and a `retryable` flag. */
export class FeeServiceError extends Error {
  readonly code: FeeErrorCode;
  readonly retryable: boolean;
  constructor(code: FeeErrorCode, message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable;
  }
}
