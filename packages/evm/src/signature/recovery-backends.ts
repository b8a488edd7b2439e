import { createRequire } from 'node:module';
import { secp256k1 } from '@noble/curves/secp256k1.js';

/**
 * Recovers the uncompressed (65-byte) public key of a compact signature, or throws.
 * `signature` is r || s (64 bytes), `recovery` 0 or 1, `hash` the 32-byte digest.
 */
export type RecoverPublicKey = (signature: Uint8Array, recovery: number, hash: Uint8Array) => Uint8Array;

/** Which implementation recovers public keys. */
export type RecoveryBackend = 'native' | 'noble';

interface NativeSecp256k1 {
  ecdsaRecover(signature: Uint8Array, recovery: number, hash: Uint8Array, compressed: boolean): Uint8Array;
}

/** libsecp256k1 through the `secp256k1` package's prebuilt binding (about 20 times faster than noble). */
function loadNative(): RecoverPublicKey | undefined {
  try {
    // The CommonJS build has no import.meta.url; there __filename is the anchor.
    const require = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
    // `secp256k1/bindings` is the native addon only; the package root silently falls back to elliptic.
    const native = require('secp256k1/bindings') as NativeSecp256k1;
    return (signature, recovery, hash) => native.ecdsaRecover(signature, recovery, hash, false);
  } catch {
    return undefined;
  }
}

/** Pure JavaScript recovery with @noble/curves. */
export const recoverPublicKeyNoble: RecoverPublicKey = (signature, recovery, hash) =>
  secp256k1.Signature.fromBytes(signature, 'compact')
    .addRecoveryBit(recovery)
    .recoverPublicKey(hash)
    .toBytes(false);

let nativeBackend: RecoverPublicKey | null | undefined;

/** The native backend, or `undefined` when the binding cannot load on this platform. */
export function getNativeRecoverPublicKey(): RecoverPublicKey | undefined {
  if (nativeBackend === undefined) nativeBackend = loadNative() ?? null;
  return nativeBackend ?? undefined;
}

/**
 * The signature recovery backend used by default: `'native'` (libsecp256k1 through the optional
 * `secp256k1` package) when its prebuilt binding loads, `'noble'` (@noble/curves) otherwise.
 *
 * @example getDefaultRecoveryBackend() // 'native' on linux-x64, darwin-arm64, win32-x64
 */
export function getDefaultRecoveryBackend(): RecoveryBackend {
  return getNativeRecoverPublicKey() ? 'native' : 'noble';
}

export function getRecoverPublicKey(backend: RecoveryBackend | undefined): RecoverPublicKey {
  if (backend === 'noble') return recoverPublicKeyNoble;
  const native = getNativeRecoverPublicKey();
  if (native) return native;
  if (backend === 'native') throw new Error('The native secp256k1 binding is not available on this platform');
  return recoverPublicKeyNoble;
}
