import { feeForVsize, fromMilliSatPerVb, roundRate3, toMilliSatPerVb } from '../../domain/fee-math';
import { entryRate, FULL_BLOCK_WEIGHT, isFullBlock } from '../../domain/inclusion';
import type { TierName } from '../../domain/types';
import { type FeeMarket, feeRate, tierMet } from '../market';
import type { InputKind, ScriptKind } from '../script-types';
import { type Heuristic, transactionHeuristics } from './heuristics';
import type { ParsedTransaction } from './parse';

/** BIP 125: a sequence below 0xfffffffe signals that the transaction may be replaced. */
export const BIP125_MAX_SEQUENCE = 0xfffffffd;

/** Where a transaction is, as the upstream reports it (Esplora `status`). */
export interface TransactionStatus {
  confirmed: boolean;
  block_height?: number;
  block_hash?: string;
  block_time?: number;
}

/** A mempool relative of a transaction (mempool.space's CPFP view: ancestors and descendants). */
export interface MempoolRelative {
  txid: string;
  fee: number;
  weight: number;
}

export interface TransactionAnalysisInput {
  parsed: ParsedTransaction;
  status: TransactionStatus;
  /** The current market from the validated snapshot. */
  market: FeeMarket;
  /** The chain tip now (for confirmations); falls back to the market's tip. */
  tipHeight?: number | null;
  /** [min, p10, p25, p50, p75, p90, max] of the block that confirmed it, when confirmed. */
  blockFeeRange?: readonly number[];
  /** Weight of that block, WU: whether it was full decides its entry rate. */
  blockWeight?: number;
  /** Unconfirmed parents and children, when the upstream reports them. */
  cpfp?: { ancestors: MempoolRelative[]; descendants: MempoolRelative[] };
  /** The upstream's own figures, reported beside ours so a disagreement is visible. */
  upstream?: { fee?: number; weight?: number };
}

export interface TransactionFacts {
  transaction: {
    txid: string;
    wtxid: string;
    version: number;
    locktime: number;
    size: number;
    weight: number;
    vsize: number;
    segwit: boolean;
    coinbase: boolean;
    input_count: number;
    output_count: number;
  };
  inputs: {
    n: number;
    txid: string;
    vout: number;
    type: InputKind;
    value_sat: number | null;
    sequence: number;
  }[];
  outputs: { n: number; type: ScriptKind; value_sat: number; address: string | null }[];
  script_types: { inputs: Partial<Record<InputKind, number>>; outputs: Partial<Record<ScriptKind, number>> };
  totals: { input_sat: number | null; output_sat: number };
  fee: { fee_sat: number; fee_rate_sat_vb: number } | null;
  status: {
    confirmed: boolean;
    block_height: number | null;
    block_hash: string | null;
    block_time: string | null;
    confirmations: number;
  };
  rbf: {
    signals_bip125: boolean;
    signalling_inputs: number[];
    /** Version 3 (TRUC, BIP 431) transactions are replaceable by policy whatever their sequences. */
    truc_v3: boolean;
  };
  /** How the rate compares with the fee market; null for a coinbase or an unknown fee. */
  market: {
    reference: 'next_block_now' | 'confirming_block';
    next_block_floor_sat_vb: number;
    floor_source: FeeMarket['floor_source'];
    tiers: FeeMarket['tiers'];
    tier_met: TierName | 'below_minimum';
    /** Unconfirmed: does it reach the next block's entry rate now (would it be included, as projected)? */
    would_be_included_next_block: boolean | null;
    /** Confirmed: p10 of its block's fee rates. */
    block_p10_sat_vb: number | null;
    /** Confirmed: whether its block was full (docs/fee-rules.md#would-have-been-included); null when its weight is unknown. */
    block_full: boolean | null;
    /**
     * Confirmed: its block's entry rate, the lowest rate that would have been included in it — the
     * relay minimum (today's minimum tier) when the block had room, max(relay minimum, p10) when full.
     */
    block_entry_rate_sat_vb: number | null;
    /** Rate above the reference (the next block's entry rate, or its block's), sat/vB, and the sats that represents at this vsize. */
    overpaid_sat_vb: number;
    overpaid_sat: number;
  } | null;
  cpfp: {
    ancestors: MempoolRelative[];
    descendants: MempoolRelative[];
    package_fee_sat: number;
    package_vsize: number;
    package_fee_rate_sat_vb: number;
  } | null;
  consistency: { upstream_fee_sat: number | null; upstream_weight: number | null; agrees: boolean };
  heuristics: Heuristic[];
}

function countBy<K extends string>(items: readonly { kind: K }[]): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const { kind } of items) out[kind] = (out[kind] ?? 0) + 1;
  return out;
}

function marketFacts(
  input: TransactionAnalysisInput,
  fee: TransactionFacts['fee'],
): TransactionFacts['market'] {
  if (!fee) return null;
  const { market, parsed, status } = input;
  const rateMilli = toMilliSatPerVb(fee.fee_rate_sat_vb);
  const p10 = status.confirmed ? (input.blockFeeRange?.[1] ?? null) : null;
  // Its block by the one rule (docs/fee-rules.md#would-have-been-included); a block of unknown
  // weight is read as full (its p10), the rule's cautious side.
  const blockFull = p10 === null || input.blockWeight === undefined ? null : isFullBlock(input.blockWeight);
  const blockEntry =
    p10 === null
      ? null
      : roundRate3(entryRate({ weight: input.blockWeight ?? FULL_BLOCK_WEIGHT, p10 }, market.tiers.minimum));
  const floor = status.confirmed && blockEntry !== null ? blockEntry : market.next_block_floor_sat_vb;
  const overMilli = Math.max(0, rateMilli - toMilliSatPerVb(floor));
  return {
    reference: status.confirmed ? 'confirming_block' : 'next_block_now',
    next_block_floor_sat_vb: market.next_block_floor_sat_vb,
    floor_source: market.floor_source,
    tiers: market.tiers,
    tier_met: tierMet(fee.fee_rate_sat_vb, market.tiers),
    would_be_included_next_block: status.confirmed
      ? null
      : rateMilli >= toMilliSatPerVb(market.next_block_floor_sat_vb),
    block_p10_sat_vb: p10,
    block_full: blockFull,
    block_entry_rate_sat_vb: blockEntry,
    overpaid_sat_vb: fromMilliSatPerVb(overMilli),
    overpaid_sat: overMilli === 0 ? 0 : Math.max(0, fee.fee_sat - feeForVsize(floor, parsed.vsize)),
  };
}

function cpfpFacts(input: TransactionAnalysisInput, fee: TransactionFacts['fee']): TransactionFacts['cpfp'] {
  const { cpfp, parsed, status } = input;
  if (status.confirmed || !cpfp || !fee || (cpfp.ancestors.length === 0 && cpfp.descendants.length === 0)) {
    return null;
  }
  const relatives = [...cpfp.ancestors, ...cpfp.descendants];
  const packageFee = fee.fee_sat + relatives.reduce((sum, r) => sum + r.fee, 0);
  const packageVsize = parsed.vsize + relatives.reduce((sum, r) => sum + Math.ceil(r.weight / 4), 0);
  return {
    ancestors: cpfp.ancestors,
    descendants: cpfp.descendants,
    package_fee_sat: packageFee,
    package_vsize: packageVsize,
    package_fee_rate_sat_vb: feeRate(packageFee, packageVsize),
  };
}

/**
 * The checkable facts of one transaction: sizes and fee measured from its bytes and prevouts,
 * how its rate compares with the market (the next-block floor now, or its own block once
 * confirmed), RBF signalling, confirmations, CPFP relatives and the labelled heuristics.
 */
export function analyzeTransaction(input: TransactionAnalysisInput): TransactionFacts {
  const { parsed, status } = input;
  const fee =
    parsed.fee_sat === null || parsed.coinbase
      ? null
      : { fee_sat: parsed.fee_sat, fee_rate_sat_vb: feeRate(parsed.fee_sat, parsed.vsize) };
  const tip = input.tipHeight ?? input.market.tip_height;
  const confirmations =
    status.confirmed && status.block_height !== undefined && tip !== null
      ? Math.max(1, tip - status.block_height + 1)
      : 0;
  const signalling = parsed.coinbase
    ? []
    : parsed.inputs.filter((i) => i.sequence <= BIP125_MAX_SEQUENCE).map((i) => i.n);
  const upstreamFee = input.upstream?.fee ?? null;
  const upstreamWeight = input.upstream?.weight ?? null;
  return {
    transaction: {
      txid: parsed.txid,
      wtxid: parsed.wtxid,
      version: parsed.version,
      locktime: parsed.locktime,
      size: parsed.size,
      weight: parsed.weight,
      vsize: parsed.vsize,
      segwit: parsed.segwit,
      coinbase: parsed.coinbase,
      input_count: parsed.inputs.length,
      output_count: parsed.outputs.length,
    },
    inputs: parsed.inputs.map((i) => ({
      n: i.n,
      txid: i.txid,
      vout: i.vout,
      type: i.kind,
      value_sat: i.value_sat,
      sequence: i.sequence,
    })),
    outputs: parsed.outputs.map((o) => ({
      n: o.n,
      type: o.kind,
      value_sat: o.value_sat,
      address: o.address,
    })),
    script_types: { inputs: countBy(parsed.inputs), outputs: countBy(parsed.outputs) },
    totals: { input_sat: parsed.input_total_sat, output_sat: parsed.output_total_sat },
    fee,
    status: {
      confirmed: status.confirmed,
      block_height: status.block_height ?? null,
      block_hash: status.block_hash ?? null,
      block_time: status.block_time === undefined ? null : new Date(status.block_time * 1000).toISOString(),
      confirmations,
    },
    rbf: {
      signals_bip125: signalling.length > 0,
      signalling_inputs: signalling,
      truc_v3: parsed.version === 3,
    },
    market: marketFacts(input, fee),
    cpfp: cpfpFacts(input, fee),
    consistency: {
      upstream_fee_sat: upstreamFee,
      upstream_weight: upstreamWeight,
      agrees:
        (upstreamFee === null || fee === null || upstreamFee === fee.fee_sat) &&
        (upstreamWeight === null || upstreamWeight === parsed.weight),
    },
    heuristics: transactionHeuristics(parsed),
  };
}
