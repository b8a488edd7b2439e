import { FeeServiceError } from '../domain/errors';

/** Where a failed upstream call went, for logs and error messages. */
export interface UpstreamCallInfo {
  /** Upstream kind, e.g. `mempool-space`, `esplora`, `bitcoin-core`. */
  upstream: string;
  /** HTTP method and path (or the RPC method). */
  operation: string;
}

const describe = (info: UpstreamCallInfo) => `${info.upstream} ${info.operation}`;

/** The upstream did not answer in time (the request was aborted). Retryable. */
export class UpstreamTimeoutError extends FeeServiceError {
  constructor(
    readonly call: UpstreamCallInfo,
    readonly timeoutMs: number,
  ) {
    super('UPSTREAM_TIMEOUT', `${describe(call)} timed out after ${timeoutMs} ms`, { retryable: true });
  }
}

/**
 * The upstream is temporarily unavailable: a network failure, a 5xx, or mempool.space's 503
 * `Service Unavailable` while its backend is out of sync (an outage, never an empty mempool).
 * Retryable.
 */
export class UpstreamUnavailableError extends FeeServiceError {
  constructor(
    readonly call: UpstreamCallInfo,
    readonly status: number | undefined,
    readonly body: string,
    cause?: unknown,
  ) {
    const why = status === undefined ? 'network failure' : `HTTP ${status}`;
    super(
      'UPSTREAM_UNAVAILABLE',
      `${describe(call)} unavailable (${why})${body ? `: ${body.slice(0, 200)}` : ''}`,
      {
        retryable: true,
        cause,
      },
    );
  }
}

/** The upstream answered 429. Retryable after `retryAfterMs` when the upstream said so. */
export class UpstreamRateLimitedError extends FeeServiceError {
  constructor(
    readonly call: UpstreamCallInfo,
    readonly retryAfterMs: number | undefined,
  ) {
    super('UPSTREAM_RATE_LIMITED', `${describe(call)} rate limited (HTTP 429)`, { retryable: true });
  }
}

/** 404: the block or transaction is unknown to the upstream (`Block not found`, `Transaction not found`). */
export class UpstreamNotFoundError extends FeeServiceError {
  constructor(
    readonly call: UpstreamCallInfo,
    readonly body: string,
  ) {
    super('UPSTREAM_NOT_FOUND', `${describe(call)} not found${body ? `: ${body.slice(0, 200)}` : ''}`, {
      retryable: false,
    });
  }
}

/** Any other 4xx. `detail` is the `error` field of a JSON body, or the text body. */
export class UpstreamHttpError extends FeeServiceError {
  constructor(
    readonly call: UpstreamCallInfo,
    readonly status: number,
    readonly detail: string,
  ) {
    super('UPSTREAM_HTTP_ERROR', `${describe(call)} answered HTTP ${status}: ${detail.slice(0, 200)}`, {
      retryable: false,
    });
  }
}

/** The body had the wrong shape (schema problems listed in `issues`). */
export class UpstreamResponseError extends FeeServiceError {
  constructor(
    readonly call: UpstreamCallInfo,
    readonly issues: string[],
  ) {
    super('UPSTREAM_INVALID_RESPONSE', `${describe(call)} answered an invalid body: ${issues.join('; ')}`, {
      retryable: false,
    });
  }
}

/** The circuit breaker is open: the call was not attempted. */
export class CircuitOpenError extends FeeServiceError {
  constructor(
    readonly upstream: string,
    readonly retryAtMs: number,
  ) {
    super(
      'UPSTREAM_CIRCUIT_OPEN',
      `${upstream} circuit open; next trial at ${new Date(retryAtMs).toISOString()}`,
      {
        retryable: false,
      },
    );
  }
}

/** Bitcoin Core RPC error codes the service tells apart. */
export const RPC_ERROR_CODES = {
  DESERIALIZATION_ERROR: -22,
  VERIFY_ERROR: -25,
  VERIFY_REJECTED: -26,
  VERIFY_ALREADY_IN_CHAIN: -27,
  IN_WARMUP: -28,
} as const;

/** Broadcast rejection families, from the RPC code. */
export type BroadcastRejectReason =
  | 'decode_failed'
  | 'missing_or_spent_inputs'
  | 'policy_rejected'
  | 'already_in_chain'
  | 'warming_up'
  | 'other';

/** Maps a Core RPC error code to its broadcast rejection family. */
export function broadcastReasonFromCode(code: number | undefined): BroadcastRejectReason {
  switch (code) {
    case RPC_ERROR_CODES.DESERIALIZATION_ERROR:
      return 'decode_failed';
    case RPC_ERROR_CODES.VERIFY_ERROR:
      return 'missing_or_spent_inputs';
    case RPC_ERROR_CODES.VERIFY_REJECTED:
      return 'policy_rejected';
    case RPC_ERROR_CODES.VERIFY_ALREADY_IN_CHAIN:
      return 'already_in_chain';
    case RPC_ERROR_CODES.IN_WARMUP:
      return 'warming_up';
    default:
      return 'other';
  }
}

/** A JSON-RPC error answered by Bitcoin Core (HTTP 500 with `{result: null, error: {code, message}}`). */
export class CoreRpcError extends FeeServiceError {
  constructor(
    readonly method: string,
    readonly rpcCode: number,
    readonly rpcMessage: string,
  ) {
    super('CORE_RPC_ERROR', `bitcoin-core ${method} failed (${rpcCode}): ${rpcMessage}`, {
      retryable: rpcCode === RPC_ERROR_CODES.IN_WARMUP,
    });
  }
}

/**
 * The node refused a transaction. `raw` keeps the upstream's text exactly as received
 * (mempool.space's `sendrawtransaction RPC error: {...}` or `sendrawtransaction RPC error -26: ...`).
 */
export class BroadcastRejectedError extends FeeServiceError {
  readonly reason: BroadcastRejectReason;
  constructor(
    readonly rpcCode: number | undefined,
    readonly rpcMessage: string,
    readonly raw: string,
  ) {
    super(
      'BROADCAST_REJECTED',
      `transaction rejected${rpcCode === undefined ? '' : ` (${rpcCode})`}: ${rpcMessage}`,
      {
        retryable: rpcCode === RPC_ERROR_CODES.IN_WARMUP,
      },
    );
    this.reason = broadcastReasonFromCode(rpcCode);
  }
}

/**
 * Parses mempool.space / Esplora broadcast error text. Both forms occur:
 * `sendrawtransaction RPC error: {"code":-26,"message":"min relay fee not met"}` and
 * `sendrawtransaction RPC error -22: TX decode failed`. Unknown text keeps `rpcCode` undefined.
 */
export function parseBroadcastError(raw: string): BroadcastRejectedError {
  const text = raw.trim();
  const jsonForm = /RPC error:\s*(\{.*\})\s*$/s.exec(text);
  if (jsonForm?.[1]) {
    try {
      const parsed = JSON.parse(jsonForm[1]) as { code?: unknown; message?: unknown };
      if (typeof parsed.code === 'number') {
        return new BroadcastRejectedError(parsed.code, String(parsed.message ?? ''), raw);
      }
    } catch {
      // fall through to the other forms
    }
  }
  const codeForm = /RPC error\s+(-?\d+):\s*(.*)$/s.exec(text);
  if (codeForm?.[1]) {
    return new BroadcastRejectedError(Number(codeForm[1]), (codeForm[2] ?? '').trim(), raw);
  }
  return new BroadcastRejectedError(undefined, text, raw);
}
