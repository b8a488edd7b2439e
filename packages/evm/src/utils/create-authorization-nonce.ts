import { bytesToHex, type Hex } from 'viem';

/**
 * 32 random bytes as 0x-hex, the nonce of an EIP-3009 authorization.
 *
 * @example createAuthorizationNonce() // '0x3f…' (66 characters)
 */
export function createAuthorizationNonce(): Hex {
  return bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(32)));
}
