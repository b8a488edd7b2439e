import { TollboothError } from '../errors/tollbooth-error';
import type { FacilitatorOperation } from './types';

/** Why a facilitator call has no definitive answer. */
export type FacilitatorErrorKind = 'timeout' | 'network' | 'http-5xx' | 'invalid-response';

/**
 * A facilitator call whose outcome is unknown: the gate treats it as "uncertain", never as a
 * rejection (fail closed: 503 at verify, 502 with a retry instruction at settle).
 */
export class FacilitatorError extends TollboothError {
  override readonly name: string = 'FacilitatorError';
  readonly kind: FacilitatorErrorKind;
  readonly operation: FacilitatorOperation;
  /** HTTP status, when the facilitator answered. */
  readonly httpStatus?: number;
  /**
   * The request provably never reached the facilitator (the connection was refused, its host did
   * not resolve, the request was never made): nothing it could do happened. A timeout, a reset or
   * a lost answer is never `unreached`.
   */
  readonly unreached: boolean;

  constructor(
    kind: FacilitatorErrorKind,
    operation: FacilitatorOperation,
    message: string,
    options: { cause?: unknown; httpStatus?: number; unreached?: boolean } = {},
  ) {
    super('facilitator_error', `${operation}: ${message}`, { cause: options.cause });
    this.kind = kind;
    this.operation = operation;
    this.unreached = options.unreached === true;
    if (options.httpStatus !== undefined) this.httpStatus = options.httpStatus;
  }
}

export function isFacilitatorError(error: unknown): error is FacilitatorError {
  return error instanceof FacilitatorError;
}
