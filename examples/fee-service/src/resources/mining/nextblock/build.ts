import { formatRate } from '../../../analysis/format';
import { subsidyAt } from '../../../domain/chain';
import { feeForVsize, roundRate3 } from '../../../domain/fee-math';
import { entryRate, entryRuleText, isFullBlock } from '../../../domain/inclusion';
import type { Reading } from '../../shared/cached-reading';
import { percentilesByVsize, percentilesFromRange } from '../../shared/provenance';
import type { NextBlockData } from './data';
import type { NextBlock } from './schema';

/** Mean seconds between blocks. */
export const MEAN_BLOCK_INTERVAL_SECONDS = 600;
const TOP = 10;

const round1 = (x: number) => Math.round(x * 10) / 10;
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
const within = (seconds: number) => round4(1 - Math.exp(-seconds / MEAN_BLOCK_INTERVAL_SECONDS));

type Summary = Omit<NextBlock['data'], 'tip' | 'expected'>;

/** What depends on the reading alone, built once per reading (a template holds thousands of transactions). */
const summaries = new WeakMap<NextBlockData, Summary>();

function summarize(data: NextBlockData): Summary {
  const { block } = data;
  const txs = block.kind === 'template' ? block.txs.map((tx) => ({ ...tx, rate: tx.fee / tx.vsize })) : [];
  const vsize = block.kind === 'template' ? txs.reduce((s, tx) => s + tx.vsize, 0) : block.vsize;
  const weight = block.kind === 'template' ? block.weight : block.vsize * 4;
  const totalFees = block.kind === 'template' ? txs.reduce((s, tx) => s + tx.fee, 0) : block.total_fees;
  const txCount = block.kind === 'template' ? txs.length : block.tx_count;
  const percentiles =
    block.kind === 'template' ? percentilesByVsize(txs) : percentilesFromRange(block.fee_range);
  // docs/fee-rules.md#would-have-been-included: the relay minimum while the block has room, its p10 once full
  const full = isFullBlock(weight);
  const entry = roundRate3(entryRate({ weight, p10: percentiles.p10 }, data.min_relay_fee));
  const top =
    block.kind === 'template'
      ? [...txs].sort((a, b) => b.rate - a.rate).slice(0, TOP)
      : block.recent
          .map((tx) => ({ ...tx, rate: tx.fee / tx.vsize }))
          .filter((tx) => tx.rate >= entry)
          .sort((a, b) => b.rate - a.rate)
          .slice(0, TOP);
  const subsidy = subsidyAt(data.height);
  const reward = subsidy + totalFees;
  return {
    height: data.height,
    basis: data.basis,
    transaction_count: txCount,
    vsize,
    weight,
    block_full: full,
    fees: {
      total_sat: totalFees,
      subsidy_sat: subsidy,
      reward_sat: reward,
      fees_share_percent: reward === 0 ? 0 : round1((100 * totalFees) / reward),
    },
    fee_rates_sat_vb: percentiles,
    entry_fee_rate_sat_vb: entry,
    entry_rule: entryRuleText({ weight }, formatRate(entry), 'has'),
    top_transactions: top.map((tx) => ({
      txid: tx.txid,
      fee_sat: tx.fee,
      vsize: tx.vsize,
      fee_rate_sat_vb: roundRate3(tx.rate),
    })),
    top_transactions_basis: block.kind === 'template' ? 'block_template' : 'recent_arrivals_above_entry',
    estimators: data.estimators.map((quote) =>
      quote.status === 'ok'
        ? {
            source: quote.source,
            status: 'ok' as const,
            fastest_sat_vb: quote.tiers.fastest,
            above_entry_sat_vb: roundRate3(quote.tiers.fastest - entry),
            verdict: quote.tiers.fastest >= entry ? ('gets_in' as const) : ('misses' as const),
            overpay_at_140_vbytes_sat: Math.max(
              0,
              feeForVsize(quote.tiers.fastest, 140) - feeForVsize(entry, 140),
            ),
          }
        : quote,
    ),
  };
}

/** Builds the next-block body from a reading at `nowMs`; pure (the per-reading part is memoised). */
export function buildNextBlock(
  reading: Reading<NextBlockData>,
  freshness: { age_seconds: number; stale: boolean },
  nowMs: number,
): NextBlock {
  const data = reading.value;
  let summary = summaries.get(data);
  if (!summary) {
    summary = summarize(data);
    summaries.set(data, summary);
  }
  const { height, basis, ...rest } = summary;
  return {
    data: {
      height,
      basis,
      tip: {
        height: data.tip.height,
        hash: data.tip.hash,
        time: new Date(data.tip.time * 1000).toISOString(),
        age_seconds: Math.max(0, Math.floor((nowMs - data.tip.time * 1000) / 1000)),
      },
      expected: {
        mean_interval_seconds: MEAN_BLOCK_INTERVAL_SECONDS,
        expected_in_seconds: MEAN_BLOCK_INTERVAL_SECONDS,
        expected_at: new Date(nowMs + MEAN_BLOCK_INTERVAL_SECONDS * 1000).toISOString(),
        probability_within: {
          '10_minutes': within(600),
          '30_minutes': within(1800),
          '60_minutes': within(3600),
        },
      },
      ...rest,
    },
    meta: {
      snapshot_digest: reading.digest,
      fetched_at: new Date(reading.fetchedAtMs).toISOString(),
      age_seconds: freshness.age_seconds,
      stale: freshness.stale,
      sources: data.urls,
    },
  };
}
