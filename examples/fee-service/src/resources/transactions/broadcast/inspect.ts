import { createHash } from 'node:crypto';
import { RawTx } from '@scure/btc-signer';

/**
 * The local checks of a transaction before anything is sent (docs/fee-service-contract.md#post-apiv1broadcast):
 * each failure is its own 400 code, answered before any payment challenge. Parsing is
 * @scure/btc-signer's `RawTx` codec, which reads any output script (OP_RETURN, P2A anchors);
 * sizes and the txid come from the bytes as received, without re-encoding.
 */

/** Shortest hex accepted: 60 bytes, below the smallest standard transaction. */
export const MIN_HEX_CHARS = 120;
/** Longest hex accepted: 400,000 bytes, the consensus weight limit of a transaction with no witness. */
export const MAX_HEX_CHARS = 800_000;
/** Largest standard transaction weight. */
export const MAX_STANDARD_WEIGHT = 400_000;
/** Smallest non-witness size Core relays (64-byte transactions are refused since 0.16). */
export const MIN_NON_WITNESS_BYTES = 65;
/** 21 million BTC in sats: no output can pay more. */
export const MAX_MONEY_SATS = 2_100_000_000_000_000n;

export const BROADCAST_CHECK_CODES = {
  hex_odd_length: 'The hex has an odd number of characters.',
  hex_length_out_of_range: `The hex is shorter than ${MIN_HEX_CHARS} or longer than ${MAX_HEX_CHARS} characters.`,
  transaction_unparsable: 'The bytes do not parse as a Bitcoin transaction.',
  transaction_without_inputs: 'The transaction has no input.',
  transaction_without_outputs: 'The transaction has no output.',
  coinbase_input: 'An input spends the null outpoint: only a block can hold a coinbase.',
  version_unsupported: 'The transaction version is not 1, 2 or 3.',
  weight_too_high: `The transaction weighs more than ${MAX_STANDARD_WEIGHT} weight units.`,
  transaction_too_small: `The transaction without witness is under ${MIN_NON_WITNESS_BYTES} bytes.`,
  output_value_too_large: 'An output pays more than 21,000,000 BTC.',
  duplicate_inputs: 'Two inputs spend the same outpoint.',
} as const;
export type BroadcastCheckCode = keyof typeof BROADCAST_CHECK_CODES;

/** A transaction that passed every local check. */
export interface InspectedTransaction {
  txid: string;
  wtxid: string;
  version: number;
  /** Bytes with witness. */
  size: number;
  weight: number;
  vsize: number;
  inputs: Array<{ txid: string; vout: number; sequence: number }>;
  outputs: Array<{ value: bigint; script: Uint8Array }>;
}

export type Inspection =
  | { ok: true; tx: InspectedTransaction }
  | { ok: false; code: BroadcastCheckCode; message: string };

const refuse = (code: BroadcastCheckCode, detail?: string): Inspection => ({
  ok: false,
  code,
  message: detail ? `${BROADCAST_CHECK_CODES[code]} ${detail}` : BROADCAST_CHECK_CODES[code],
});

const sha256d = (parts: readonly Uint8Array[]) => {
  const first = createHash('sha256');
  for (const part of parts) first.update(part);
  return createHash('sha256').update(first.digest()).digest();
};
const displayHex = (hash: Buffer) => hash.reverse().toString('hex');
const compactSizeLength = (n: number) => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

/**
 * Runs every local check on a hex transaction, in order, and returns the first failure or the
 * transaction's identity and sizes. The hex is known to be hex characters (the body schema).
 * @example inspectTransaction(body.hex) // { ok: true, tx: { txid, vsize, … } }
 */
export function inspectTransaction(hex: string): Inspection {
  if (hex.length % 2 !== 0) return refuse('hex_odd_length');
  if (hex.length < MIN_HEX_CHARS || hex.length > MAX_HEX_CHARS) {
    return refuse('hex_length_out_of_range', `It has ${hex.length}.`);
  }
  const bytes = Buffer.from(hex, 'hex');
  let raw: ReturnType<typeof RawTx.decode>;
  try {
    raw = RawTx.decode(bytes);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // A zero input count reads as the SegWit marker: say what a person would fix.
    if (bytes[4] === 0x00 && bytes[5] !== 0x01) return refuse('transaction_without_inputs');
    return refuse('transaction_unparsable', `(${reason.slice(0, 120)})`);
  }
  if (raw.inputs.length === 0) return refuse('transaction_without_inputs');
  if (raw.outputs.length === 0) return refuse('transaction_without_outputs');
  const inputs = raw.inputs.map((input) => ({
    txid: Buffer.from(input.txid).toString('hex'),
    vout: input.index,
    sequence: input.sequence,
  }));
  const seen = new Set<string>();
  for (const input of inputs) {
    if (input.vout === 0xffffffff && /^0{64}$/.test(input.txid)) return refuse('coinbase_input');
    const key = `${input.txid}:${input.vout}`;
    if (seen.has(key)) return refuse('duplicate_inputs', `(${key})`);
    seen.add(key);
  }
  if (raw.version < 1 || raw.version > 3) return refuse('version_unsupported', `It is ${raw.version}.`);
  for (const output of raw.outputs) {
    if (output.amount > MAX_MONEY_SATS) return refuse('output_value_too_large');
  }

  // Witness bytes as serialised: per input, the item count and each item with its length.
  let witnessBytes = 0;
  if (raw.segwitFlag && raw.witnesses) {
    witnessBytes = 2; // marker and flag
    for (const stack of raw.witnesses) {
      witnessBytes += compactSizeLength(stack.length);
      for (const item of stack) witnessBytes += compactSizeLength(item.length) + item.length;
    }
  }
  const strippedSize = bytes.length - witnessBytes;
  const weight = strippedSize * 3 + bytes.length;
  if (weight > MAX_STANDARD_WEIGHT) return refuse('weight_too_high', `It weighs ${weight}.`);
  if (strippedSize < MIN_NON_WITNESS_BYTES) return refuse('transaction_too_small', `It has ${strippedSize}.`);

  // The stripped serialisation is the bytes without marker, flag and witnesses: slices, not a re-encoding.
  const stripped = raw.segwitFlag
    ? [bytes.subarray(0, 4), bytes.subarray(6, 6 + strippedSize - 8), bytes.subarray(bytes.length - 4)]
    : [bytes];
  return {
    ok: true,
    tx: {
      txid: displayHex(sha256d(stripped)),
      wtxid: displayHex(sha256d([bytes])),
      version: raw.version,
      size: bytes.length,
      weight,
      vsize: Math.ceil(weight / 4),
      inputs,
      outputs: raw.outputs.map((output) => ({ value: output.amount, script: output.script })),
    },
  };
}
