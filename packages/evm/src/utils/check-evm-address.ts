import { checksumAddress, type Hex } from 'viem';

export interface CheckEvmAddressParameters {
  /** The address as configured, e.g. a route's `payTo`. */
  address: string;
}
/** What is wrong with the address, as the end of a sentence; `undefined` when it is valid. */
export type CheckEvmAddressReturnType = string | undefined;
export type CheckEvmAddressErrorType = never;

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ZERO_ADDRESS = /^0x0{40}$/;

/**
 * Checks an EVM address given in configuration. It must be `0x` and 40 hex digits and not the
 * zero address (a payment there is burnt). A mixed-case address must match its EIP-55 checksum,
 * which catches a mistyped character; an all-lower-case (or all-upper-case) address carries no
 * checksum and is accepted as written, because the x402 client copies `payTo` verbatim and the
 * match is exact.
 *
 * @example
 * checkEvmAddress({ address: '0xYourAddress' }) // 'is "0xYourAddress", not an EVM address (0x and 40 hex digits)'
 * checkEvmAddress({ address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' }) // undefined
 */
export function checkEvmAddress(parameters: CheckEvmAddressParameters): CheckEvmAddressReturnType {
  const { address } = parameters;
  if (typeof address !== 'string' || !HEX_ADDRESS.test(address)) {
    return `is ${JSON.stringify(address)}, not an EVM address (0x and 40 hex digits)`;
  }
  if (ZERO_ADDRESS.test(address)) return 'is the zero address: whatever is paid to it is lost';
  const digits = address.slice(2);
  const noChecksum = digits === digits.toLowerCase() || digits === digits.toUpperCase();
  if (!noChecksum && checksumAddress(address as Hex) !== address) {
    return `"${address}" fails its EIP-55 checksum (mixed case that does not match: a mistyped character?)`;
  }
  return undefined;
}
