import { type Address, type Hex, hexToBytes } from 'viem';
import { keccak256Bytes } from './keccak';
import { getRecoverPublicKey, type RecoveryBackend } from './recovery-backends';

/**
 * Half the secp256k1 group order as 64 lower-case hex digits: signatures with a larger `s` are
 * malleable and tokens reject them. Fixed-width lower-case hex compares as the numbers do.
 */
const HALF_N_HEX = '7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0';
const ZERO_WORD_HEX = '0'.repeat(64);
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const DIGEST = /^0x[0-9a-fA-F]{64}$/;

export interface RecoverSignerAddressParameters {
  /** The 32-byte digest that was signed. */
  hash: Hex | Uint8Array;
  /** A 65-byte `r || s || v` signature (`v` 27/28 or 0/1). */
  signature: Hex;
  /** Force a backend; by default native libsecp256k1 when it loads, else @noble/curves. */
  backend?: RecoveryBackend | undefined;
}
/** The signer's address (lower-case), or `undefined` when the signature cannot be recovered. */
export type RecoverSignerAddressReturnType = Address | undefined;

/**
 * Recovers the address that produced an ECDSA signature over a digest. Returns `undefined` for
 * anything an EIP-3009 token would refuse: not 65 bytes, `v` not in 27/28/0/1, `s` in the upper
 * half of the curve order, or an unrecoverable point.
 *
 * @example
 * const signer = recoverSignerAddress({ hash: digest, signature });
 */
export function recoverSignerAddress(
  parameters: RecoverSignerAddressParameters,
): RecoverSignerAddressReturnType {
  const { hash, signature, backend } = parameters;
  if (typeof signature !== 'string' || signature.length !== 132 || !SIGNATURE.test(signature))
    return undefined;
  const bytes = Buffer.from(signature.slice(2), 'hex');
  const v = bytes[64]!;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  const s = signature.slice(66, 130).toLowerCase();
  if (s === ZERO_WORD_HEX || s > HALF_N_HEX) return undefined;
  const digest =
    typeof hash !== 'string'
      ? hash
      : DIGEST.test(hash)
        ? Buffer.from(hash.slice(2), 'hex')
        : hexToBytes(hash);
  if (digest.length !== 32) return undefined;
  try {
    const publicKey = getRecoverPublicKey(backend)(bytes.subarray(0, 64), recovery, digest);
    return `0x${keccak256Bytes(publicKey.subarray(1)).toString('hex', 12)}` as Address;
  } catch {
    return undefined;
  }
}
