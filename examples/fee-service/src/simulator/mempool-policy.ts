import * as btc from '@scure/btc-signer';
import type { SimulationModel } from './model';
import { DUST_LIMITS, materialOf } from './transactions';
import type { Material, MaterialInput, OutputKind, SimTx } from './types';

/** Core's default `maxfeerate` of sendrawtransaction and testmempoolaccept: 0.10 BTC/kvB. */
export const DEFAULT_MAX_FEE_RATE_SAT_VB = 10_000;

/** Why a node refuses a transaction: the RPC code, its message and testmempoolaccept's reject-reason. */
export interface Refusal {
  ok: false;
  code: number;
  message: string;
  rejectReason: string;
  /** Set when the transaction could be decoded. */
  txid?: string;
  wtxid?: string;
}

export type Evaluation =
  | { ok: true; material: Material; replaced: SimTx[] }
  /** The same transaction is already in the mempool: sendrawtransaction answers its txid. */
  | { ok: 'known'; material: Material }
  | Refusal;

const DECODE_FAILED = 'TX decode failed. Make sure the tx has at least one input.';
const btcPerKvb = (satPerVb: number) => (satPerVb / 100_000).toFixed(8);

function refuse(code: number, message: string, rejectReason: string, material?: Material): Refusal {
  return {
    ok: false,
    code,
    message,
    rejectReason,
    ...(material ? { txid: material.txid, wtxid: material.wtxid } : {}),
  };
}

function outputKind(script: Uint8Array): OutputKind | 'other' {
  if (script[0] === 0x6a) return 'op_return';
  if (script.length === 4 && script[0] === 0x51 && script[1] === 0x02) return 'p2a';
  try {
    const type = btc.OutScript.decode(script).type;
    const kinds: Record<string, OutputKind> = {
      wpkh: 'p2wpkh',
      tr: 'p2tr',
      pkh: 'p2pkh',
      sh: 'p2sh',
      wsh: 'p2wsh',
    };
    return kinds[type] ?? 'other';
  } catch {
    return 'other';
  }
}

/** Decodes raw hex with @scure/btc-signer into the simulator's parts (prevouts unknown yet). */
function decode(hex: string): Material | undefined {
  const clean = hex.trim();
  if (!/^([0-9a-fA-F]{2})+$/.test(clean)) return undefined;
  try {
    const raw = btc.RawTx.decode(Buffer.from(clean, 'hex'));
    if (raw.inputs.length === 0 || raw.outputs.length === 0) return undefined;
    const inputs: MaterialInput[] = raw.inputs.map((input, i) => ({
      txid: Buffer.from(input.txid).toString('hex'),
      vout: input.index,
      sequence: input.sequence,
      scriptSig: input.finalScriptSig,
      witness: raw.witnesses?.[i] ?? [],
      prevout: null,
    }));
    const material = materialOf({
      version: raw.version,
      inputs,
      outputs: raw.outputs.map((o) => ({ script: o.script, value: o.amount })),
      locktime: raw.lockTime,
    });
    // A non-canonical encoding (trailing bytes, an empty witness flag) re-encodes differently.
    return material.hex === clean.toLowerCase() ? material : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a Bitcoin Core node with default policy decides about a raw transaction, in Core's order
 * and wording: decode (-22), already in the mempool or the chain (-27), inputs missing or spent
 * (-25, or a replacement of the mempool transaction spending them, judged by BIP 125 fee rules),
 * standardness (version, dust: -26), fee below inputs (-25), the minimum relay fee (-26), and the
 * `maxFeeRate` guard (-25).
 */
export function evaluateTransaction(
  model: SimulationModel,
  hex: string,
  options: { maxFeeRateSatVb?: number } = {},
): Evaluation {
  const decoded = decode(hex);
  if (!decoded) return refuse(-22, DECODE_FAILED, 'decode-failed');
  const existing = model.findTx(decoded.txid);
  if (existing && !existing.block) return { ok: 'known', material: existing.tx.material! };
  if (existing?.block) {
    return refuse(-27, 'Transaction outputs already in utxo set', 'txn-already-known', decoded);
  }
  if (decoded.inputs.some((i) => i.txid === '00'.repeat(32) && i.vout === 0xffffffff)) {
    return refuse(-26, 'coinbase', 'coinbase', decoded);
  }
  if (decoded.version < 1 || decoded.version > 3) return refuse(-26, 'version', 'version', decoded);

  const seen = new Set<string>();
  const conflicts = new Set<SimTx>();
  const inputs: MaterialInput[] = [];
  for (const input of decoded.inputs) {
    const key = `${input.txid}:${input.vout}`;
    if (seen.has(key)) return refuse(-26, 'bad-txns-inputs-duplicate', 'bad-txns-inputs-duplicate', decoded);
    seen.add(key);
    const utxo = model.index.utxo(input.txid, input.vout);
    const spender = utxo ? undefined : model.index.spender(input.txid, input.vout);
    if (!utxo && !(spender && model.mempool.has(spender.seq))) {
      return refuse(-25, 'bad-txns-inputs-missingorspent', 'missing-inputs', decoded);
    }
    if (spender) conflicts.add(spender);
    const prevout = utxo ?? model.index.spentOutput(input.txid, input.vout);
    inputs.push({ ...input, prevout: prevout ? { script: prevout.script, value: prevout.value } : null });
  }
  const material = materialOf({
    version: decoded.version,
    inputs,
    outputs: decoded.outputs,
    locktime: decoded.locktime,
  });
  for (const output of material.outputs) {
    const kind = outputKind(output.script);
    if (kind === 'other') return refuse(-26, 'scriptpubkey', 'scriptpubkey', material);
    if (output.value < BigInt(DUST_LIMITS[kind])) return refuse(-26, 'dust', 'dust', material);
  }
  if (material.fee < 0) return refuse(-25, 'bad-txns-in-belowout', 'bad-txns-in-belowout', material);
  const minRelay = model.params.minRelayFee;
  const required = Math.ceil(minRelay * material.vsize);
  if (material.fee < required) {
    const reason = `min relay fee not met, ${material.fee} < ${required}`;
    return refuse(-26, reason, 'min relay fee not met', material);
  }
  const rate = material.fee / material.vsize;
  if (conflicts.size > 0) {
    const replaced = [...conflicts];
    const oldFees = replaced.reduce((sum, tx) => sum + tx.fee, 0);
    const oldRate = Math.max(...replaced.map((tx) => tx.rate));
    const first = replaced[0]!.material!.txid;
    if (rate <= oldRate) {
      const reason = `insufficient fee, rejecting replacement ${material.txid}; new feerate ${btcPerKvb(rate)} BTC/kvB <= old feerate ${btcPerKvb(oldRate)} BTC/kvB`;
      return refuse(-26, reason, 'insufficient fee', material);
    }
    if (material.fee < oldFees + required) {
      const reason = `insufficient fee, rejecting replacement ${material.txid}, not enough additional fees to relay; ${btcPerKvb((material.fee - oldFees) / material.vsize)} < ${btcPerKvb(minRelay)}`;
      return refuse(-26, reason, 'insufficient fee', material);
    }
    if (first === material.txid) return { ok: 'known', material };
  }
  const max = options.maxFeeRateSatVb ?? DEFAULT_MAX_FEE_RATE_SAT_VB;
  if (max > 0 && rate > max) {
    return refuse(
      -25,
      'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)',
      'max-fee-exceeded',
      material,
    );
  }
  return { ok: true, material, replaced: [...conflicts] };
}
