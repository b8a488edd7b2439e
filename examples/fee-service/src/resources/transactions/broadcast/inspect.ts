import { createHash } from 'node:crypto';
import { Transaction } from '@scure/btc-signer';

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
  /** Hashed on first use (the checks themselves do not need the ids). */
  readonly txid: string;
  readonly wtxid: string;
  version: number;
  /** Bytes with witness. */
  size: number;
  weight: number;
  vsize: number;
  /** The outpoints spent (txids written out on first use: the checks themselves never need them). */
  readonly inputs: ReadonlyArray<{ txid: string; vout: number; sequence: number }>;
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

/** Thrown by {@link ByteReader} past the end of the bytes, or at a non-canonical length. */
class Truncated extends Error {}

/** A cursor over the received bytes: reads in place, allocates nothing but the outpoints' txids. */
class ByteReader {
  offset = 0;
  constructor(readonly bytes: Buffer) {}
  need(n: number): void {
    if (this.offset + n > this.bytes.length) throw new Truncated('truncated');
  }
  u32(): number {
    this.need(4);
    const value = this.bytes.readUInt32LE(this.offset);
    this.offset += 4;
    return value;
  }
  u64(): bigint {
    this.need(8);
    const value = this.bytes.readBigUInt64LE(this.offset);
    this.offset += 8;
    return value;
  }
  /** Bitcoin's CompactSize, refusing non-canonical encodings as Core does. */
  compactSize(): number {
    this.need(1);
    const first = this.bytes[this.offset++]!;
    if (first < 0xfd) return first;
    const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
    this.need(width);
    const value =
      width === 2
        ? this.bytes.readUInt16LE(this.offset)
        : width === 4
          ? this.bytes.readUInt32LE(this.offset)
          : Number(this.bytes.readBigUInt64LE(this.offset));
    this.offset += width;
    const min = width === 2 ? 0xfd : width === 4 ? 0x10000 : 0x100000000;
    if (value < min || value > this.bytes.length) throw new Truncated('non-canonical or oversized length');
    return value;
  }
  skip(n: number): void {
    this.need(n);
    this.offset += n;
  }
}

interface Scanned {
  version: number;
  segwit: boolean;
  /** Per input: where its outpoint starts in the bytes, its index and sequence. */
  inputs: Array<{ at: number; vout: number; sequence: number }>;
  outputs: InspectedTransaction['outputs'];
  /** Where the outputs end (the witnesses or the lock time begin). */
  outputsEnd: number;
}

/**
 * Reads the serialisation (BIP 144 when the marker and flag are there) without copying it: the
 * checks run on every unpaid attempt, before any challenge, so they must stay cheap for a
 * 1,000-input transaction. `inspect.test.ts` holds it to @scure/btc-signer's `RawTx` codec
 * (the same verdict and txid on generated and mutated transactions), and the handler parses the
 * paid transaction with btc-signer again before anything is sent.
 */
function scan(bytes: Buffer): Scanned {
  const reader = new ByteReader(bytes);
  reader.need(6);
  const version = bytes.readInt32LE(0);
  reader.offset = 4;
  const segwit = bytes[4] === 0x00 && bytes[5] === 0x01;
  if (segwit) reader.offset = 6;
  const inputs: Scanned['inputs'] = new Array(reader.compactSize());
  for (let i = 0; i < inputs.length; i += 1) {
    reader.need(36);
    const at = reader.offset;
    reader.offset += 32;
    const vout = reader.u32();
    reader.skip(reader.compactSize());
    inputs[i] = { at, vout, sequence: reader.u32() };
  }
  const outputs: Scanned['outputs'] = new Array(reader.compactSize());
  for (let i = 0; i < outputs.length; i += 1) {
    const value = reader.u64();
    const length = reader.compactSize();
    reader.need(length);
    outputs[i] = { value, script: bytes.subarray(reader.offset, reader.offset + length) };
    reader.offset += length;
  }
  const outputsEnd = reader.offset;
  if (segwit) {
    for (let i = 0; i < inputs.length; i += 1) {
      const items = reader.compactSize();
      for (let k = 0; k < items; k += 1) reader.skip(reader.compactSize());
    }
  }
  reader.skip(4); // lock time
  if (reader.offset !== bytes.length) throw new Truncated('bytes after the lock time');
  return { version, segwit, inputs, outputs, outputsEnd };
}

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
  // A zero input count reads as the SegWit marker: say what a person would fix.
  if (bytes[4] === 0x00 && bytes[5] !== 0x01) return refuse('transaction_without_inputs');
  let tx: Scanned;
  try {
    tx = scan(bytes);
  } catch (error) {
    if (!(error instanceof Truncated)) throw error;
    return refuse('transaction_unparsable', `(${error.message})`);
  }
  if (tx.inputs.length === 0) return refuse('transaction_without_inputs');
  if (tx.outputs.length === 0) return refuse('transaction_without_outputs');
  // Outpoints compared as their 36 raw bytes (a latin1 string holds them one character a byte).
  const seen = new Set<string>();
  for (const input of tx.inputs) {
    if (input.vout === 0xffffffff && bytes.subarray(input.at, input.at + 32).every((b) => b === 0)) {
      return refuse('coinbase_input');
    }
    const key = bytes.toString('latin1', input.at, input.at + 36);
    if (seen.has(key)) return refuse('duplicate_inputs', `(${outpointTxid(bytes, input.at)}:${input.vout})`);
    seen.add(key);
  }
  if (tx.version < 1 || tx.version > 3) return refuse('version_unsupported', `It is ${tx.version}.`);
  for (const output of tx.outputs) {
    if (output.value > MAX_MONEY_SATS) return refuse('output_value_too_large');
  }
  // Without witness: version, inputs and outputs, lock time (no marker, flag or witness stacks).
  const strippedSize = tx.segwit ? 4 + (tx.outputsEnd - 6) + 4 : bytes.length;
  const weight = strippedSize * 3 + bytes.length;
  if (weight > MAX_STANDARD_WEIGHT) return refuse('weight_too_high', `It weighs ${weight}.`);
  if (strippedSize < MIN_NON_WITNESS_BYTES) return refuse('transaction_too_small', `It has ${strippedSize}.`);

  // The stripped serialisation is slices of the bytes, not a re-encoding.
  const stripped = tx.segwit
    ? [bytes.subarray(0, 4), bytes.subarray(6, tx.outputsEnd), bytes.subarray(bytes.length - 4)]
    : [bytes];
  const once = <T>(target: object, key: string, value: T): T => {
    Object.defineProperty(target, key, { value, enumerable: true });
    return value;
  };
  return {
    ok: true,
    tx: {
      get txid(): string {
        return once(this, 'txid', displayHex(sha256d(stripped)));
      },
      get wtxid(): string {
        return once(this, 'wtxid', tx.segwit ? displayHex(sha256d([bytes])) : this.txid);
      },
      version: tx.version,
      size: bytes.length,
      weight,
      vsize: Math.ceil(weight / 4),
      get inputs() {
        return once(
          this,
          'inputs',
          tx.inputs.map((input) => ({
            txid: outpointTxid(bytes, input.at),
            vout: input.vout,
            sequence: input.sequence,
          })),
        );
      },
      outputs: tx.outputs,
    },
  };
}

/** The txid of an outpoint at `at`, written as txids are (byte-reversed hex). */
const outpointTxid = (bytes: Buffer, at: number) =>
  Buffer.from(bytes.subarray(at, at + 32))
    .reverse()
    .toString('hex');

/**
 * Parses the transaction with @scure/btc-signer (any output script allowed): the handler's second
 * opinion before a paid transaction is sent. @returns whether btc-signer reads it to the same txid
 */
export function parsesWithBtcSigner(hex: string, txid: string): boolean {
  try {
    return (
      Transaction.fromRaw(Buffer.from(hex, 'hex'), {
        allowUnknownOutputs: true,
        allowUnknownInputs: true,
        disableScriptCheck: true,
      }).id === txid
    );
  } catch {
    return false;
  }
}
