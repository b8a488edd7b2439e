// Well-formed dummy parts of generated transactions: random bytes, DER signatures, compressed
// keys, the output script of each kind and what spends it (transactions.ts assembles them).
import { createHash } from 'node:crypto';
import * as btc from '@scure/btc-signer';
import type { Prng } from './prng';
import type { InputKind, OutputKind } from './types';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();

/** `length` random bytes. */
export const bytes = (rng: Prng, length: number) => {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i += 1) out[i] = rng.int(256);
  return out;
};

/** A DER signature with 32-byte r and s (no padding needed) and SIGHASH_ALL: 72 bytes. */
function derSignature(rng: Prng): Uint8Array {
  const r = bytes(rng, 32);
  const s = bytes(rng, 32);
  r[0] = 0x01 + (r[0]! & 0x7e);
  s[0] = 0x01 + (s[0]! & 0x3e);
  return Uint8Array.of(0x30, 0x44, 0x02, 0x20, ...r, 0x02, 0x20, ...s, 0x01);
}

const compressedKey = (rng: Prng) => Uint8Array.of(0x02 + rng.int(2), ...bytes(rng, 32));
const push = (data: Uint8Array) => Uint8Array.of(data.length, ...data);
const P2A_SCRIPT = Uint8Array.of(0x51, 0x02, 0x4e, 0x73);
/** OP_1 <32-byte key>, written directly: btc-signer checks the key is on the curve, a dummy need not be. */
const taprootScript = (rng: Prng) => Uint8Array.of(0x51, 0x20, ...bytes(rng, 32));

/** A dummy output script of this kind. */
export function outputScript(kind: OutputKind, rng: Prng): Uint8Array {
  switch (kind) {
    case 'p2wpkh':
      return btc.OutScript.encode({ type: 'wpkh', hash: bytes(rng, 20) });
    case 'p2tr':
      return taprootScript(rng);
    case 'p2pkh':
      return btc.OutScript.encode({ type: 'pkh', hash: bytes(rng, 20) });
    case 'p2sh':
      return btc.OutScript.encode({ type: 'sh', hash: bytes(rng, 20) });
    case 'p2wsh':
      return btc.OutScript.encode({ type: 'wsh', hash: bytes(rng, 32) });
    case 'op_return':
      return btc.Script.encode(['RETURN', bytes(rng, 32)]);
    case 'p2a':
      return P2A_SCRIPT;
  }
}

/** What spends an output of this kind: its scriptSig, its witness and the prevout script it spends. */
export function spend(
  kind: InputKind,
  rng: Prng,
): { scriptSig: Uint8Array; witness: Uint8Array[]; script: Uint8Array } {
  switch (kind) {
    case 'p2wpkh':
      return {
        scriptSig: new Uint8Array(0),
        witness: [derSignature(rng), compressedKey(rng)],
        script: btc.OutScript.encode({ type: 'wpkh', hash: bytes(rng, 20) }),
      };
    case 'p2tr':
      return {
        scriptSig: new Uint8Array(0),
        witness: [bytes(rng, 64)],
        script: taprootScript(rng),
      };
    case 'p2pkh':
      return {
        scriptSig: Uint8Array.of(...push(derSignature(rng)), ...push(compressedKey(rng))),
        witness: [],
        script: btc.OutScript.encode({ type: 'pkh', hash: bytes(rng, 20) }),
      };
    case 'p2sh-p2wpkh': {
      const redeem = btc.OutScript.encode({ type: 'wpkh', hash: bytes(rng, 20) });
      return {
        scriptSig: push(redeem),
        witness: [derSignature(rng), compressedKey(rng)],
        script: btc.OutScript.encode({ type: 'sh', hash: bytes(rng, 20) }),
      };
    }
    case 'p2wsh': {
      // 2-of-3 multisig: OP_2 <key> <key> <key> OP_3 OP_CHECKMULTISIG.
      const script = Uint8Array.of(
        0x52,
        ...push(compressedKey(rng)),
        ...push(compressedKey(rng)),
        ...push(compressedKey(rng)),
        0x53,
        0xae,
      );
      return {
        scriptSig: new Uint8Array(0),
        witness: [new Uint8Array(0), derSignature(rng), derSignature(rng), script],
        script: btc.OutScript.encode({ type: 'wsh', hash: sha256(script) }),
      };
    }
  }
}
