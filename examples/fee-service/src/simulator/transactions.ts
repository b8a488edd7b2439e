import { createHash } from 'node:crypto';
import * as btc from '@scure/btc-signer';
import { createPrng, type Prng } from './prng';
import { bytes, outputScript, spend } from './script-parts';
import type { InputKind, Material, MaterialInput, OutputKind, TxShape } from './types';

/**
 * The simulator's transactions as real Bitcoin serialisations, built with @scure/btc-signer's
 * `RawTx` codec: inputs with their prevouts, witness data, txid and wtxid (double SHA-256 of the
 * stripped and the full serialisation). Generated transactions are materialised only when a
 * client asks for one (a block template, a block's transactions, a lookup); until then a
 * transaction is its shape, fee and arrival, which keeps start-up fast.
 *
 * Keys, hashes and signatures of generated transactions are well-formed dummies (DER signatures
 * with low-S-sized r and s, compressed-key-sized public keys, 20- and 32-byte hashes): every field
 * has the length and form of the real thing, so sizes, weights and script types are exact, but
 * the signatures do not verify (script-parts.ts). Transactions a client broadcasts keep their own
 * bytes. The types are in types.ts; reading an output script back is output-scripts.ts.
 */

/** Core's dust thresholds (3 sat/vB dust relay fee), sats; OP_RETURN is exempt. */
export const DUST_LIMITS: Readonly<Record<OutputKind, number>> = {
  p2wpkh: 294,
  p2tr: 330,
  p2pkh: 546,
  p2sh: 540,
  p2wsh: 330,
  op_return: 0,
  p2a: 240,
};

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();
const sha256d = (bytes: Uint8Array) => sha256(sha256(bytes));
/** Internal byte order → the hex a txid is written in. */
const reversedHex = (bytes: Uint8Array) => Buffer.from(bytes).reverse().toString('hex');
/** A written txid → internal byte order. */
export const txidBytes = (txid: string) => Buffer.from(txid, 'hex').reverse();

interface RawParts {
  version: number;
  inputs: MaterialInput[];
  outputs: Array<{ script: Uint8Array; value: bigint }>;
  locktime: number;
}

/** Serialises parts with btc-signer and hashes them into a {@link Material}. */
export function materialOf(parts: RawParts): Material {
  const segwit = parts.inputs.some((input) => input.witness.length > 0);
  const raw = {
    version: parts.version,
    inputs: parts.inputs.map((input) => ({
      // btc-signer's coder writes a txid as displayed (it reverses the bytes itself).
      txid: Buffer.from(input.txid, 'hex'),
      index: input.vout,
      finalScriptSig: input.scriptSig,
      sequence: input.sequence,
    })),
    outputs: parts.outputs.map((output) => ({ amount: output.value, script: output.script })),
    lockTime: parts.locktime,
  };
  const stripped = btc.RawTx.encode({ ...raw, segwitFlag: false, witnesses: undefined });
  const full = segwit
    ? btc.RawTx.encode({ ...raw, segwitFlag: true, witnesses: parts.inputs.map((input) => input.witness) })
    : stripped;
  const weight = stripped.length * 3 + full.length;
  const prevouts = parts.inputs.map((input) => input.prevout);
  const fee = prevouts.every((p) => p !== null)
    ? Number(
        prevouts.reduce((sum, p) => sum + p!.value, 0n) - parts.outputs.reduce((sum, o) => sum + o.value, 0n),
      )
    : 0;
  return {
    txid: reversedHex(sha256d(stripped)),
    wtxid: reversedHex(sha256d(full)),
    hex: Buffer.from(full).toString('hex'),
    version: parts.version,
    locktime: parts.locktime,
    size: full.length,
    weight,
    vsize: Math.ceil(weight / 4),
    inputs: parts.inputs,
    outputs: parts.outputs,
    fee,
  };
}

const shapes = new Map<string, TxShape>();

/** The shape of a layout, its sizes measured once on a template built like the real thing. */
export function shapeOf(
  version: number,
  inputs: readonly InputKind[],
  outputs: readonly OutputKind[],
): TxShape {
  const key = `${version}:${inputs.join(',')}>${outputs.join(',')}`;
  let shape = shapes.get(key);
  if (!shape) {
    const rng = createPrng(0x5eed);
    const material = materialOf({
      version,
      inputs: inputs.map((kind) => ({
        txid: '00'.repeat(32),
        vout: 0,
        sequence: 0xfffffffd,
        ...spend(kind, rng),
        prevout: null,
      })),
      outputs: outputs.map((kind) => ({ script: outputScript(kind, rng), value: 1n })),
      locktime: 0,
    });
    shape = {
      key,
      version,
      inputs,
      outputs,
      size: material.size,
      weight: material.weight,
      vsize: material.vsize,
    };
    shapes.set(key, shape);
  }
  return shape;
}

const repeat = <T>(value: T, count: number): T[] => Array.from({ length: count }, () => value);

/**
 * Draws a layout with a mix close to today's mainnet: one-input two-output SegWit payments
 * dominate; Taproot, legacy, wrapped SegWit, 2-of-3 multisig, OP_RETURN, batch payouts,
 * consolidations, coinjoin-like rounds and v3 transactions with a P2A anchor occur too.
 */
export function drawShape(rng: Prng): TxShape {
  const u = rng.next();
  if (u < 0.4) return shapeOf(2, ['p2wpkh'], ['p2wpkh', 'p2wpkh']);
  if (u < 0.52) return shapeOf(2, ['p2wpkh'], ['p2wpkh']);
  if (u < 0.62) return shapeOf(2, ['p2tr'], ['p2tr', 'p2tr']);
  if (u < 0.7) return shapeOf(2, ['p2wpkh', 'p2wpkh'], ['p2wpkh', 'p2wpkh']);
  if (u < 0.75) return shapeOf(1, ['p2pkh'], ['p2pkh', 'p2pkh']);
  if (u < 0.8) return shapeOf(2, ['p2sh-p2wpkh'], ['p2sh', 'p2wpkh']);
  if (u < 0.84) return shapeOf(2, ['p2wsh'], ['p2wsh', 'p2wpkh']);
  if (u < 0.88)
    return shapeOf(2, repeat<InputKind>('p2wpkh', 3 + rng.int(3)), repeat<OutputKind>('p2wpkh', 3));
  if (u < 0.91) return shapeOf(2, ['p2wpkh'], ['p2wpkh', 'op_return']);
  if (u < 0.94) return shapeOf(2, repeat<InputKind>('p2wpkh', 10 + rng.int(31)), ['p2wpkh']);
  if (u < 0.97) return shapeOf(2, ['p2wpkh'], repeat<OutputKind>('p2wpkh', 10 + rng.int(31)));
  if (u < 0.99) return shapeOf(3, ['p2wpkh'], ['p2tr', 'p2a']);
  const n = 5 + rng.int(6);
  return shapeOf(2, repeat<InputKind>('p2wpkh', n), repeat<OutputKind>('p2wpkh', n + 1));
}

/** A deterministic generator for one materialisation. */
export function prngFor(seed: number, label: string): Prng {
  return createPrng(sha256(Buffer.from(`${seed}:${label}`)).readUInt32LE(0));
}

/** Output values: lognormal payments (~0.002 BTC median), fixed for anchors and OP_RETURN. */
function drawOutputValue(kind: OutputKind, rng: Prng): bigint {
  if (kind === 'op_return') return 0n;
  if (kind === 'p2a') return 240n;
  const value = Math.round(Math.min(5e9, Math.max(DUST_LIMITS[kind] + 1000, rng.logNormal(200_000, 1.6))));
  return BigInt(value);
}

/** A funding transaction: one old input, one output of `value` to `script`; what a generated input spends. */
export function fundingMaterial(seed: number, label: string, script: Uint8Array, value: bigint): Material {
  const rng = prngFor(seed, `funding:${label}`);
  const spent = spend('p2wpkh', rng);
  return materialOf({
    version: 2,
    inputs: [
      {
        txid: bytes(rng, 32).reduce((hex, b) => hex + b.toString(16).padStart(2, '0'), ''),
        vout: rng.int(4),
        sequence: 0xfffffffd,
        scriptSig: spent.scriptSig,
        witness: spent.witness,
        prevout: null,
      },
    ],
    outputs: [{ script, value }],
    locktime: 0,
  });
}

/**
 * Materialises a generated transaction: `fee` split from the inputs, each input spending output 0
 * of its own funding transaction (returned too, so a lookup of the parent resolves).
 */
export function materializeGenerated(
  seed: number,
  seq: number,
  shape: TxShape,
  fee: number,
  rbf: boolean,
): { material: Material; fundings: Material[] } {
  const rng = prngFor(seed, `tx:${seq}`);
  const outputs = shape.outputs.map((kind) => ({
    script: outputScript(kind, rng),
    value: drawOutputValue(kind, rng),
  }));
  const totalIn = outputs.reduce((sum, o) => sum + o.value, 0n) + BigInt(fee);
  const n = BigInt(shape.inputs.length);
  const fundings: Material[] = [];
  const inputs: MaterialInput[] = shape.inputs.map((kind, index) => {
    const share = index === shape.inputs.length - 1 ? totalIn - (totalIn / n) * (n - 1n) : totalIn / n;
    const spent = spend(kind, rng);
    const funding = fundingMaterial(seed, `${seq}:${index}`, spent.script, share);
    fundings.push(funding);
    return {
      txid: funding.txid,
      vout: 0,
      sequence: rbf || shape.version === 3 ? 0xfffffffd : 0xffffffff,
      scriptSig: spent.scriptSig,
      witness: spent.witness,
      prevout: { script: spent.script, value: share },
    };
  });
  return { material: materialOf({ version: shape.version, inputs, outputs, locktime: 0 }), fundings };
}

/** A block's coinbase: BIP 34 height, the reward to the pool, the witness commitment. */
export function coinbaseMaterial(options: {
  seed: number;
  height: number;
  reward: number;
  /** The block's wtxids, coinbase excluded (commitment input). */
  witnessCommitment: Uint8Array;
}): Material {
  const rng = prngFor(options.seed, `coinbase:${options.height}`);
  const height = Buffer.alloc(3);
  height.writeUIntLE(options.height, 0, 3);
  return materialOf({
    version: 2,
    inputs: [
      {
        txid: '00'.repeat(32),
        vout: 0xffffffff,
        sequence: 0xffffffff,
        scriptSig: Uint8Array.of(0x03, ...height, 0x08, ...bytes(rng, 8)),
        witness: [new Uint8Array(32)],
        prevout: null,
      },
    ],
    outputs: [
      { script: btc.OutScript.encode({ type: 'wpkh', hash: bytes(rng, 20) }), value: BigInt(options.reward) },
      {
        script: Uint8Array.of(0x6a, 0x24, 0xaa, 0x21, 0xa9, 0xed, ...options.witnessCommitment),
        value: 0n,
      },
    ],
    locktime: 0,
  });
}

/** Double SHA-256 of the witness merkle root and a zero reserved value (BIP 141). */
export function witnessCommitment(wtxids: readonly string[]): Uint8Array {
  let level: Buffer[] = [Buffer.alloc(32), ...wtxids.map((w) => txidBytes(w))];
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2)
      next.push(sha256d(Buffer.concat([level[i]!, level[i + 1] ?? level[i]!])));
    level = next;
  }
  return sha256d(Buffer.concat([level[0]!, Buffer.alloc(32)]));
}
