/**
 * Virtual sizes worked out from the serialization (BIP 141: weight = 4 × bytes outside the witness
 * + witness bytes; vsize = ceil(weight / 4)), with 72-byte ECDSA and 64-byte Schnorr signatures
 * (the larger of their usual sizes, so an estimate is never short). One input and two outputs of
 * P2WPKH come to 141 vB, of P2TR to 154 vB, of P2PKH to 226 vB.
 */

export const SPENDABLE_TYPES = ['p2pkh', 'p2sh-p2wpkh', 'p2wpkh', 'p2tr'] as const;
export type InputType = (typeof SPENDABLE_TYPES)[number];
export const OUTPUT_TYPES = ['p2pkh', 'p2sh', 'p2wpkh', 'p2wsh', 'p2tr'] as const;
export type OutputType = (typeof OUTPUT_TYPES)[number];

/** Weight of one input: outside the witness (×4) and its witness (the stack count included). */
const INPUT_WEIGHT: Readonly<Record<InputType, { base: number; witness: number }>> = {
  // outpoint 36 + sequence 4 + script length 1 + scriptSig (push 72-byte signature, push 33-byte key)
  p2pkh: { base: 4 * (36 + 4 + 1 + 107), witness: 0 },
  // scriptSig pushes the 22-byte P2WPKH redeem script; witness: count, signature, key
  'p2sh-p2wpkh': { base: 4 * (36 + 4 + 1 + 23), witness: 1 + 73 + 34 },
  p2wpkh: { base: 4 * (36 + 4 + 1), witness: 1 + 73 + 34 },
  // key path: witness is one 64-byte Schnorr signature
  p2tr: { base: 4 * (36 + 4 + 1), witness: 1 + 65 },
};

/** Bytes of one output: value 8 + script length 1 + script. */
const OUTPUT_BYTES: Readonly<Record<OutputType, number>> = {
  p2pkh: 8 + 1 + 25,
  p2sh: 8 + 1 + 23,
  p2wpkh: 8 + 1 + 22,
  p2wsh: 8 + 1 + 34,
  p2tr: 8 + 1 + 34,
};

/** Bytes of a count prefix (Bitcoin's CompactSize). */
const compactSize = (n: number) => (n < 253 ? 1 : n <= 0xffff ? 3 : 5);

export interface TransactionShape {
  inputs: { type: InputType; count: number }[];
  outputs: { type: OutputType; count: number }[];
}

/** Weight and vsize of a transaction of this shape. */
export function estimateSize(shape: TransactionShape): { weight: number; vsize: number } {
  const inputs = shape.inputs.reduce((n, i) => n + i.count, 0);
  const outputs = shape.outputs.reduce((n, o) => n + o.count, 0);
  const segwit = shape.inputs.some((i) => i.count > 0 && INPUT_WEIGHT[i.type].witness > 0);
  // version 4 + locktime 4 + the two counts; a SegWit transaction adds marker and flag (2 WU) and
  // an empty witness (one byte) for each legacy input.
  let weight = 4 * (8 + compactSize(inputs) + compactSize(outputs)) + (segwit ? 2 : 0);
  for (const { type, count } of shape.inputs) {
    const w = INPUT_WEIGHT[type];
    weight += count * (w.base + (segwit ? Math.max(1, w.witness) : w.witness));
  }
  for (const { type, count } of shape.outputs) weight += count * 4 * OUTPUT_BYTES[type];
  return { weight, vsize: vsizeOfWeight(weight) };
}

/** vsize = ceil(weight / 4). */
export const vsizeOfWeight = (weight: number): number => Math.ceil(weight / 4);

/** A typical payment: one P2WPKH input, a P2WPKH payment and a P2WPKH change output (141 vB). */
export const TYPICAL_PAYMENT: TransactionShape = {
  inputs: [{ type: 'p2wpkh', count: 1 }],
  outputs: [{ type: 'p2wpkh', count: 2 }],
};
/** A CPFP child: one P2WPKH input (the output being bumped) to one P2WPKH output (110 vB). */
export const TYPICAL_CHILD: TransactionShape = {
  inputs: [{ type: 'p2wpkh', count: 1 }],
  outputs: [{ type: 'p2wpkh', count: 1 }],
};

/**
 * Dust thresholds at Bitcoin Core's default dust relay rate of 3 sat/vB: an output is dust when
 * spending it would cost more than it holds (its own size plus the input that spends it).
 */
export const DUST_RELAY_SAT_VB = 3;
export const DUST_THRESHOLDS_SAT: Readonly<Record<OutputType, number>> = {
  // (output + a 148-byte legacy input) × 3, or (output + 67 vB of a SegWit input) × 3
  p2pkh: (34 + 148) * DUST_RELAY_SAT_VB,
  p2sh: (32 + 148) * DUST_RELAY_SAT_VB,
  p2wpkh: (31 + 67) * DUST_RELAY_SAT_VB,
  p2wsh: (43 + 67) * DUST_RELAY_SAT_VB,
  p2tr: (43 + 67) * DUST_RELAY_SAT_VB,
};
