import { fromMilliSatPerVb, toMilliSatPerVb } from '../../domain/fee-math';
import { entryRate, isFullBlock } from '../../domain/inclusion';
import { feeRate, median } from '../market';

/** Weight limit of a block (BIP 141). */
export const MAX_BLOCK_WEIGHT = 4_000_000;
/** A block's median rate this far (in %) from the recent median reads as "in line". */
export const IN_LINE_PERCENT = 25;

/** Block subsidy in sats: 50 BTC halved every 210,000 blocks. */
export function subsidyAtHeight(height: number): number {
  const halvings = Math.floor(height / 210_000);
  return halvings >= 64 ? 0 : Math.floor(5_000_000_000 / 2 ** halvings);
}

/** A block as mempool.space's `/api/v1/blocks` lists it (Esplora fields plus `extras`). */
export interface BlockSummaryInput {
  id: string;
  height: number;
  timestamp: number;
  tx_count: number;
  size: number;
  weight: number;
  extras?: {
    totalFees: number;
    medianFee: number;
    feeRange: number[];
    avgFeeRate: number;
    reward?: number;
    pool?: { id: number; name: string; slug: string };
  };
}

/** One transaction of the block in compact form (txid, fee, vsize). */
export interface BlockTxInput {
  txid: string;
  fee: number;
  vsize: number;
}

export interface BlockAnalysisInput {
  block: BlockSummaryInput;
  /** The blocks before it, newest first (mempool.space gives 14 more with the block itself). */
  previous: BlockSummaryInput[];
  tipHeight: number | null;
  /** Its transactions (the coinbase excluded), when the upstream gives them. */
  txs?: readonly BlockTxInput[];
  /** The relay minimum, sat/vB (today's minimum tier): a block with room took every rate meeting it. */
  relayMinimum?: number;
}

type Rates = { min: number; p10: number; p25: number; p50: number; p75: number; p90: number; max: number };

export interface BlockFacts {
  block: {
    height: number;
    hash: string;
    time: string;
    pool: string | null;
    tx_count: number;
    size: number;
    weight: number;
    /** weight / 4,000,000 in percent, one decimal. */
    fullness_percent: number;
    confirmations: number;
  };
  fees: {
    total_fee_sat: number;
    subsidy_sat: number;
    reward_sat: number;
    /** Fees as a share of subsidy + fees, percent, one decimal. */
    fee_share_of_reward_percent: number;
    avg_fee_rate_sat_vb: number;
  };
  fee_rates_sat_vb: Rates | null;
  /**
   * The block by the rule of docs/fee-rules.md#would-have-been-included: whether it was full and
   * the lowest rate that would have been included in it (the relay minimum when it had room, its
   * p10, at least the relay minimum, when full); null without its fee rates or a relay minimum.
   */
  inclusion: { full: boolean; relay_minimum_sat_vb: number; entry_rate_sat_vb: number } | null;
  recent: {
    blocks: number;
    median_p50_sat_vb: number;
    median_p10_sat_vb: number;
    /** How many of the recent blocks had a lower median rate than this one. */
    lower_median_count: number;
    comparison: 'higher' | 'in_line' | 'lower';
    median_total_fee_sat: number;
  } | null;
  time_since_previous_seconds: number | null;
  notable: {
    transactions_seen: number;
    highest_fee: (BlockTxInput & { fee_rate_sat_vb: number }) | null;
    highest_rate: (BlockTxInput & { fee_rate_sat_vb: number }) | null;
    largest: (BlockTxInput & { fee_rate_sat_vb: number }) | null;
  } | null;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

function ratesOf(block: BlockSummaryInput): Rates | null {
  const range = block.extras?.feeRange;
  if (!range || range.length < 7) return null;
  const [min, p10, p25, p50, p75, p90, max] = range.map((r) => fromMilliSatPerVb(toMilliSatPerVb(r))) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { min, p10, p25, p50, p75, p90, max };
}

function recentFacts(block: BlockSummaryInput, previous: BlockSummaryInput[]): BlockFacts['recent'] {
  const rated = previous.filter((b) => (b.extras?.feeRange.length ?? 0) >= 7);
  const own = ratesOf(block);
  if (rated.length === 0 || !own) return null;
  const p50s = rated.map((b) => b.extras!.feeRange[3]!);
  const medianP50 = median(p50s);
  const ratio = medianP50 === 0 ? 0 : (100 * (own.p50 - medianP50)) / medianP50;
  return {
    blocks: rated.length,
    median_p50_sat_vb: fromMilliSatPerVb(toMilliSatPerVb(medianP50)),
    median_p10_sat_vb: fromMilliSatPerVb(toMilliSatPerVb(median(rated.map((b) => b.extras!.feeRange[1]!)))),
    lower_median_count: p50s.filter((p) => p < own.p50).length,
    comparison: ratio > IN_LINE_PERCENT ? 'higher' : ratio < -IN_LINE_PERCENT ? 'lower' : 'in_line',
    median_total_fee_sat: median(rated.map((b) => b.extras!.totalFees)),
  };
}

function notableFacts(all: readonly BlockTxInput[] | undefined): BlockFacts['notable'] {
  // An entry without a size or with a negative fee is not a transaction we can rank.
  const txs = all?.filter((tx) => tx.vsize > 0 && tx.fee >= 0);
  if (!txs || txs.length === 0) return null;
  const withRate = (tx: BlockTxInput) => ({ ...tx, fee_rate_sat_vb: feeRate(tx.fee, tx.vsize) });
  let highestFee = txs[0]!;
  let highestRate = txs[0]!;
  let largest = txs[0]!;
  for (const tx of txs) {
    if (tx.fee > highestFee.fee) highestFee = tx;
    // Compare fee/vsize by cross-multiplication: exact on integers.
    if (tx.fee * highestRate.vsize > highestRate.fee * tx.vsize) highestRate = tx;
    if (tx.vsize > largest.vsize) largest = tx;
  }
  return {
    transactions_seen: txs.length,
    highest_fee: withRate(highestFee),
    highest_rate: withRate(highestRate),
    largest: withRate(largest),
  };
}

/**
 * The checkable facts of one block: who mined it, how full it is, its fees against the subsidy,
 * its fee-rate percentiles against the blocks before it, the time since the previous one and its
 * notable transactions.
 */
export function analyzeBlock(input: BlockAnalysisInput): BlockFacts {
  const { block, previous } = input;
  const subsidy = subsidyAtHeight(block.height);
  const fees = block.extras?.totalFees ?? 0;
  const prev = previous.find((b) => b.height === block.height - 1);
  const rates = ratesOf(block);
  return {
    block: {
      height: block.height,
      hash: block.id,
      time: new Date(block.timestamp * 1000).toISOString(),
      pool: block.extras?.pool?.name ?? null,
      tx_count: block.tx_count,
      size: block.size,
      weight: block.weight,
      fullness_percent: round1((100 * block.weight) / MAX_BLOCK_WEIGHT),
      confirmations: input.tipHeight === null ? 0 : Math.max(1, input.tipHeight - block.height + 1),
    },
    fees: {
      total_fee_sat: fees,
      subsidy_sat: subsidy,
      reward_sat: subsidy + fees,
      fee_share_of_reward_percent: round1((100 * fees) / (subsidy + fees || 1)),
      avg_fee_rate_sat_vb: fromMilliSatPerVb(toMilliSatPerVb(block.extras?.avgFeeRate ?? 0)),
    },
    fee_rates_sat_vb: rates,
    inclusion:
      rates && input.relayMinimum !== undefined
        ? {
            full: isFullBlock(block.weight),
            relay_minimum_sat_vb: input.relayMinimum,
            entry_rate_sat_vb: entryRate({ weight: block.weight, p10: rates.p10 }, input.relayMinimum),
          }
        : null,
    recent: recentFacts(block, previous),
    time_since_previous_seconds: prev ? block.timestamp - prev.timestamp : null,
    notable: notableFacts(input.txs),
  };
}
