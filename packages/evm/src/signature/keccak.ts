import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { keccak256 as keccak256Js } from 'viem';

/** The sponge state of the `keccak` package's native addon (XKCP), as `lib/api/keccak.js` drives it. */
interface NativeKeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}

/**
 * The `keccak` package's prebuilt binding (an optional dependency, like `secp256k1`): several times
 * faster than viem's JavaScript keccak on the paid path, which hashes three times per payment
 * (struct, digest, public key). The package's own API wraps each hash in a `readable-stream`
 * Transform, which costs more than the hash itself; the addon's `KeccakState` is driven directly
 * here, one state reused for every hash (hashing is synchronous, so nothing interleaves).
 * `undefined` where the binding does not load.
 */
function loadNative(): ((data: Buffer) => Buffer) | undefined {
  try {
    // The CommonJS build has no import.meta.url; there __filename is the anchor.
    const require = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
    // `keccak/bindings` is the native addon only (the package root silently falls back to JS);
    // loading it runs the package's own check that the addon works on this runtime.
    const bindings = require.resolve('keccak/bindings');
    require(bindings);
    const KeccakState = createRequire(bindings)('node-gyp-build')(dirname(bindings)) as unknown;
    if (typeof KeccakState !== 'function') return undefined;
    const state = new (KeccakState as new () => NativeKeccakState)();
    return (data) => {
      // Keccak-256: rate 1088 bits, capacity 512, the original Keccak padding (0x01), 32 bytes out.
      state.initialize(1088, 512);
      state.absorb(data);
      state.absorbLastFewBits(0x01);
      return state.squeeze(32);
    };
  } catch {
    return undefined;
  }
}

const native = loadNative();

/** A Buffer view of `data` (copies nothing). */
const asBuffer = (data: Uint8Array): Buffer =>
  Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);

/** Keccak-256 of `data` as a fresh 32-byte Buffer: native when the binding loads, else viem's. */
export const keccak256Bytes: (data: Uint8Array) => Buffer = native
  ? (data) => native(asBuffer(data))
  : (data) => asBuffer(keccak256Js(data, 'bytes'));

/** Whether the native keccak binding is in use. */
export const isNativeKeccak = native !== undefined;
