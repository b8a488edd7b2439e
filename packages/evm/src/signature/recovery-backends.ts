import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';

/**
 * Recovers the uncompressed (65-byte) public key of a compact signature, or throws.
 * `signature` is r || s (64 bytes), `recovery` 0 or 1, `hash` the 32-byte digest. The native
 * backend answers in one buffer it reuses: read (or copy) the key before the next call.
 */
export type RecoverPublicKey = (signature: Uint8Array, recovery: number, hash: Uint8Array) => Uint8Array;

/** Which implementation recovers public keys. */
export type RecoveryBackend = 'native' | 'noble';

/** The `secp256k1` package's native addon itself: writes into `output`, answers 0 on success. */
interface NativeSecp256k1Addon {
  ecdsaRecover(output: Uint8Array, signature: Uint8Array, recovery: number, hash: Uint8Array): number;
}

/** libsecp256k1 through the `secp256k1` package's prebuilt binding (about 20 times faster than noble). */
function loadNative(): RecoverPublicKey | undefined {
  try {
    // The CommonJS build has no import.meta.url; there __filename is the anchor.
    const require = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
    // `secp256k1/bindings` is the native addon behind a JavaScript layer that re-checks every
    // argument's type and allocates the output; the package root silently falls back to elliptic.
    // The addon is called directly: recoverSignerAddress has already checked the lengths and the
    // recovery id, and hashes the key before the next call can overwrite the shared output.
    const bindings = require.resolve('secp256k1/bindings');
    const Addon = createRequire(bindings)('node-gyp-build')(dirname(bindings))
      .Secp256k1 as new () => NativeSecp256k1Addon;
    const native = new Addon();
    const output = new Uint8Array(65);
    return (signature, recovery, hash) => {
      if (signature.length !== 64 || hash.length !== 32 || (recovery !== 0 && recovery !== 1))
        throw new Error('a recoverable signature is 64 bytes, a recovery id 0 or 1 and a 32-byte digest');
      const status = native.ecdsaRecover(output, signature, recovery, hash);
      if (status !== 0) throw new Error(`libsecp256k1 could not recover the key (status ${status})`);
      return output;
    };
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
