import { ALGORITHM_VERSION } from '../../../domain/constants';
import { feeForVsize } from '../../../domain/fee-math';
import { projectedBlockEntry } from '../../../domain/inclusion';
import { decideSendWait } from '../../../domain/send-wait';
import { type FeeTiers, TIER_NAMES, type TierName } from '../../../domain/types';
import type { ProjectedBlock } from '../../../snapshot/types';
import type { Reading } from '../../shared/cached-reading';
import { TIER_TARGETS } from '../../shared/chain-sources';
import { percentilesFromRange } from '../../shared/provenance';
import type { LandscapeData } from './data';
import { BAND_EDGES, nameEnvironment, trendOf } from './environment';
import type { FeeLandscape } from './schema';

const round1 = (x: number) => Math.round(x * 10) / 10;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Each tier across the available sources, with the spread of their quotes. */
function compareTiers(data: LandscapeData) {
  const available = data.sources.filter((s) => s.status === 'ok');
  return TIER_NAMES.map((tier) => {
    const quotes = available.map((s) => ({ source: s.source, rate_sat_vb: s.tiers[tier] }));
    const rates = quotes.map((q) => q.rate_sat_vb);
    const low = Math.min(...rates);
    const high = Math.max(...rates);
    return {
      tier,
      target_blocks: tier === 'minimum' ? null : TIER_TARGETS[tier as Exclude<TierName, 'minimum'>],
      quotes,
      low_sat_vb: low,
      high_sat_vb: high,
      spread_sat_vb: round3(high - low),
      spread_percent: high === 0 ? 0 : round1((100 * (high - low)) / high),
    };
  });
}

/**
 * The histogram as bands. An upstream bucket `[rate, vsize]` holds the transactions paying from its
 * rate (its lowest) up to the next higher bucket's rate (mempool.space and electrs list them highest
 * first); the highest bucket reaches the mempool's highest rate. Buckets are grouped at
 * mempool.space's fee levels ({@link BAND_EDGES}) by their lowest rate, and each band is labelled by
 * the real bounds of the buckets it holds — never by the level it was grouped at: a bucket from 3.9
 * to 16.4 sat/vB is a band 3.9–16.4, not "3–4". Counts are the band's vsize at the mean transaction
 * size, with the rounding remainder given to the largest bands so they add up to the mempool's count.
 * @param highestRate the mempool's highest rate, sat/vB (the first projected block's), when known:
 *   the top band's upper bound; without it the top band has none (`max_sat_vb: null`).
 */
export function histogramBands(mempool: LandscapeData['mempool'], highestRate?: number) {
  const buckets = [...mempool.histogram].sort((a, b) => b[0] - a[0]);
  const groups = new Map<number, { min: number; max: number | null; vsize: number }>();
  buckets.forEach(([rate, vsize], i) => {
    if (vsize <= 0) return;
    const upper =
      i > 0 ? buckets[i - 1]![0] : highestRate !== undefined && highestRate >= rate ? highestRate : null;
    let level = 0;
    while (level + 1 < BAND_EDGES.length && rate >= BAND_EDGES[level + 1]!) level += 1;
    const group = groups.get(level);
    if (group) {
      group.min = rate;
      group.vsize += vsize;
    } else groups.set(level, { min: rate, max: upper, vsize });
  });
  const ordered = [...groups.values()]; // highest first: the buckets were
  const totalVsize = ordered.reduce((sum, g) => sum + g.vsize, 0);
  const exact = ordered.map((g) => (totalVsize === 0 ? 0 : (g.vsize * mempool.count) / totalVsize));
  const counts = exact.map(Math.floor);
  let remainder = mempool.count - counts.reduce((a, b) => a + b, 0);
  const byFraction = exact
    .map((x, i) => ({ i, f: x - Math.floor(x) }))
    .sort((a, b) => b.f - a.f || a.i - b.i);
  for (const { i } of byFraction) {
    if (remainder <= 0) break;
    counts[i] = counts[i]! + 1;
    remainder -= 1;
  }
  const bands = ordered.map((g, i) => ({
    min_sat_vb: round3(g.min),
    max_sat_vb: g.max === null ? null : round3(g.max),
    vsize: g.vsize,
    transaction_count: counts[i]!,
  }));
  return { bands, counts: 'estimated_from_mean_vsize' as const };
}

/** The highest fee rate of the projected blocks (the first holds it), sat/vB; undefined without any. */
export function highestProjectedRate(blocks: readonly ProjectedBlock[]): number | undefined {
  const highs = blocks.map((b) => b.fee_range.at(-1)).filter((r): r is number => r !== undefined);
  return highs.length === 0 ? undefined : Math.max(...highs);
}

/**
 * A projected block's figures as the landscape (and the dashboard) publish them; `index` 0 is the
 * next block. Its entry rate is the rule's (docs/fee-rules.md#would-have-been-included): the relay
 * minimum while it has room, its p10 (at least the relay minimum) once full.
 */
export function projectedBlockFigures(block: ProjectedBlock, index: number, relayMinimum: number) {
  const { full, entry } = projectedBlockEntry(block, relayMinimum);
  return {
    index,
    vsize: Math.round(block.block_vsize),
    transaction_count: block.n_tx,
    total_fees_sat: Math.round(block.total_fees),
    median_fee_rate_sat_vb: round3(block.median_fee),
    min_fee_rate_sat_vb: round3(block.fee_range[0] ?? block.median_fee),
    max_fee_rate_sat_vb: round3(block.fee_range.at(-1) ?? block.median_fee),
    full,
    entry_fee_rate_sat_vb: entry,
  };
}

/** The body's data depends on the reading alone: built once per reading. */
const built = new WeakMap<LandscapeData, FeeLandscape['data']>();

/**
 * Builds the landscape body from a reading; pure, so the same reading, age and staleness always
 * give the same bytes (the data part is memoised per reading). The signal and the costs use
 * mempool.space's tiers (the primary source).
 */
export function buildFeeLandscape(
  reading: Reading<LandscapeData>,
  freshness: { age_seconds: number; stale: boolean },
): FeeLandscape {
  let data = built.get(reading.value);
  if (!data) {
    data = landscapeData(reading.value);
    built.set(reading.value, data);
  }
  return {
    data,
    meta: {
      snapshot_digest: reading.digest,
      fetched_at: new Date(reading.fetchedAtMs).toISOString(),
      age_seconds: freshness.age_seconds,
      stale: freshness.stale,
      sources: reading.value.urls,
      primary_source: 'mempool.space',
      algorithm_version: ALGORITHM_VERSION,
      environment_version: 'fee-environment-v1',
    },
  };
}

function landscapeData(data: LandscapeData): FeeLandscape['data'] {
  const primary = data.sources.find((s) => s.source === 'mempool.space');
  if (primary?.status !== 'ok') throw new TypeError('a landscape reading always has the mempool.space quote');
  const tiers: FeeTiers = primary.tiers;
  const signal = decideSendWait({ tiers, mempool: { count: data.mempool.count, vsize: data.mempool.vsize } });
  const recent = data.recent_blocks.map((block) => ({
    height: block.height,
    time: new Date(block.time * 1000).toISOString(),
    transaction_count: block.tx_count,
    total_fees_sat: block.total_fees,
    fee_rates_sat_vb: percentilesFromRange(block.fee_range),
  }));
  const trend = trendOf(recent.map((block) => block.fee_rates_sat_vb.p50));
  return {
    tip_height: data.tip_height,
    sources: data.sources,
    tiers: compareTiers(data),
    mempool: { ...signal.mempool, total_fee_sat: data.mempool.total_fee },
    histogram: histogramBands(data.mempool, highestProjectedRate(data.projected_blocks)),
    projected_blocks: data.projected_blocks.map((block, i) => projectedBlockFigures(block, i, tiers.minimum)),
    recent_blocks: recent,
    trend,
    environment: nameEnvironment({
      fastest: tiers.fastest,
      projectedBlockCount: signal.mempool.projected_block_count,
      recentMedian: trend.recent_median_sat_vb,
    }),
    send_wait: {
      algorithm_version: ALGORITHM_VERSION,
      decision: signal.decision,
      reason_codes: signal.reason_codes,
      potential_savings: signal.potential_savings,
    },
    costs: TIER_NAMES.map((tier) => ({
      tier,
      rate_sat_vb: tiers[tier],
      fee_140_vbytes_sat: feeForVsize(tiers[tier], 140),
      fee_1000_vbytes_sat: feeForVsize(tiers[tier], 1000),
    })),
  };
}
