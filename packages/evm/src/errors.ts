import { TollboothError } from '@tollbooth/core';

/** The core error codes `@tollbooth/evm` throws, by what went wrong. */
export const EvmErrorCode = {
  /** An option of a factory is missing or invalid. */
  invalidOptions: 'invalid_config',
  /** A price cannot be turned into an amount (malformed, negative, or no asset known for the network). */
  invalidPrice: 'invalid_amount',
  /** No payment requirement the client can pay (scheme, network, or EIP-712 domain missing). */
  noPayableRequirement: 'payment_requirements_mismatch',
} as const;
export type EvmErrorCode = (typeof EvmErrorCode)[keyof typeof EvmErrorCode];

/**
 * A configuration or usage error of `@tollbooth/evm` (a {@link TollboothError} with a stable
 * `code`). Payment failures are never thrown: they are returned as official reason strings.
 */
export class EvmSchemeError extends TollboothError {
  override readonly name: string = 'EvmSchemeError';
  /** Every problem found, when several were reported at once. */
  readonly problems: readonly string[];

  constructor(code: EvmErrorCode, message: string, problems: readonly string[] = [message]) {
    super(code, message, { details: { problems } });
    this.problems = problems;
  }
}
