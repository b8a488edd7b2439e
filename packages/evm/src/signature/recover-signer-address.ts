import { type Address, bytesToHex, type Hex, hexToBytes } from 'viem';
import { keccak256Bytes } from './keccak';
import { getRecoverPublicKey, type RecoveryBackend } from './recovery-backends';

/** Half the secp256k1 group order: signatures with a larger `s` are malleable and tokens reject them. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

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
  if (typeof signature !== 'string' || signature.length !== 132 || !/^0x[0-9a-fA-F]{130}$/.test(signature))
    return undefined;
  const bytes = hexToBytes(signature);
  const v = bytes[64]!;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  const s = BigInt(bytesToHex(bytes.subarray(32, 64)));
  if (s === 0n || s > HALF_N) return undefined;
  const digest = typeof hash === 'string' ? hexToBytes(hash) : hash;
  if (digest.length !== 32) return undefined;
  try {
    const publicKey = getRecoverPublicKey(backend)(bytes.subarray(0, 64), recovery, digest);
    return `0x${Buffer.from(keccak256Bytes(publicKey.subarray(1)).subarray(12)).toString('hex')}` as Address;
  } catch {
    return undefined;
  }
}
