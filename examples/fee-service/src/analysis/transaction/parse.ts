import { createHash } from 'node:crypto';
import * as btc from '@scure/btc-signer';
import {
  addressOf,
  classifyInput,
  classifyOutputScript,
  type InputKind,
  type ScriptKind,
} from '../script-types';

/** The output an input spends, as the upstream reports it (Esplora `vin[].prevout`). */
export interface Prevout {
  /** scriptPubKey, hex. */
  script_hex: string;
  /** Whole sats. */
  value_sat: number;
}

export interface ParsedInput {
  n: number;
  /** The spent outpoint. */
  txid: string;
  vout: number;
  sequence: number;
  kind: InputKind;
  /** Sats of the spent output; null when the upstream gave no prevout. */
  value_sat: number | null;
  /** scriptPubKey of the spent output, hex; null when unknown. */
  prevout_script_hex: string | null;
  witness_items: number;
}

export interface ParsedOutput {
  n: number;
  kind: ScriptKind;
  value_sat: number;
  script_hex: string;
  address: string | null;
}

/** A transaction decoded from its raw bytes; sizes are measured on those bytes. */
export interface ParsedTransaction {
  txid: string;
  wtxid: string;
  version: number;
  locktime: number;
  /** Serialized size in bytes, witness included. */
  size: number;
  /** Size without the witness (what the txid commits to). */
  base_size: number;
  /** 3 × base size + total size (BIP 141). */
  weight: number;
  /** ceil(weight / 4). */
  vsize: number;
  segwit: boolean;
  coinbase: boolean;
  inputs: ParsedInput[];
  outputs: ParsedOutput[];
  /** Sum of the spent outputs, null when a prevout is unknown (or for a coinbase). */
  input_total_sat: number | null;
  output_total_sat: number;
  /** inputs − outputs, null when the inputs are not all known. Never from the upstream's own figure. */
  fee_sat: number | null;
}

/** A raw transaction that does not decode. */
export class TransactionDecodeError extends Error {
  override readonly name = 'TransactionDecodeError';
}

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const doubleSha256Reversed = (bytes: Uint8Array) => {
  const once = createHash('sha256').update(bytes).digest();
  return Buffer.from(createHash('sha256').update(once).digest()).reverse().toString('hex');
};
const COINBASE_TXID = '0'.repeat(64);

/**
 * Decodes a raw transaction with `@scure/btc-signer` and measures it: txid and wtxid are hashed
 * from the bytes, weight is 3 × base size + total size, and the fee is the spent outputs minus the
 * outputs. `prevouts` maps `txid:vout` to the spent output (the upstream's `vin[].prevout`).
 * @throws TransactionDecodeError when the hex does not decode to a transaction
 * @example
 * const parsed = parseTransaction({ hex, prevouts: new Map([[`${txid}:0`, { script_hex, value_sat: 50_000 }]]) });
 * parsed.fee_sat; // 50_000 − outputs
 */
export function parseTransaction(options: {
  hex: string;
  prevouts: ReadonlyMap<string, Prevout>;
}): ParsedTransaction {
  const { hex } = options;
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) throw new TransactionDecodeError('raw transaction is not hex');
  const bytes = Uint8Array.from(Buffer.from(hex, 'hex'));
  let raw: ReturnType<typeof btc.RawTx.decode>;
  try {
    raw = btc.RawTx.decode(bytes);
  } catch (error) {
    throw new TransactionDecodeError(`raw transaction does not decode: ${(error as Error).message}`);
  }
  const baseBytes = btc.RawTx.encode({ ...raw, segwitFlag: false, witnesses: undefined });
  const weight = 3 * baseBytes.length + bytes.length;
  const coinbase =
    raw.inputs.length === 1 &&
    hexOf(raw.inputs[0]!.txid) === COINBASE_TXID &&
    raw.inputs[0]!.index === 0xffffffff;

  let inputTotal: number | null = coinbase ? null : 0;
  const inputs = raw.inputs.map((input, n): ParsedInput => {
    const txid = hexOf(input.txid);
    const prevout = coinbase ? undefined : options.prevouts.get(`${txid}:${input.index}`);
    if (!prevout) inputTotal = null;
    else if (inputTotal !== null) inputTotal += prevout.value_sat;
    return {
      n,
      txid,
      vout: input.index,
      sequence: input.sequence,
      kind: coinbase
        ? 'coinbase'
        : prevout
          ? classifyInput(Buffer.from(prevout.script_hex, 'hex'), input.finalScriptSig)
          : 'unknown',
      value_sat: prevout ? prevout.value_sat : null,
      prevout_script_hex: prevout ? prevout.script_hex : null,
      witness_items: raw.witnesses?.[n]?.length ?? 0,
    };
  });
  const outputs = raw.outputs.map(
    (output, n): ParsedOutput => ({
      n,
      kind: classifyOutputScript(output.script),
      value_sat: Number(output.amount),
      script_hex: hexOf(output.script),
      address: addressOf(output.script),
    }),
  );
  const outputTotal = outputs.reduce((sum, o) => sum + o.value_sat, 0);
  const inputTotalSat = inputTotal as number | null;
  return {
    txid: doubleSha256Reversed(baseBytes),
    wtxid: doubleSha256Reversed(bytes),
    version: raw.version,
    locktime: raw.lockTime,
    size: bytes.length,
    base_size: baseBytes.length,
    weight,
    vsize: Math.ceil(weight / 4),
    segwit: Boolean(raw.segwitFlag),
    coinbase,
    inputs,
    outputs,
    input_total_sat: inputTotalSat,
    output_total_sat: outputTotal,
    fee_sat: inputTotalSat === null ? null : inputTotalSat - outputTotal,
  };
}
