import { roundRate3, toMilliSatPerVb } from '../domain/fee-math';
import { projectedBlockEntry } from '../domain/inclusion';
import { type FeeTiers, TIER_NAMES, type TierName } from '../domain/types';
import type { RecordedSnapshot } from '../snapshot/types';

/** The fee market the explainers compare against, read from one validated snapshot. */
export interface FeeMarket {
  tiers: FeeTiers;
  /**
   * The next block's entry rate now, sat/vB: the lowest rate it would include, by the rule of
   * docs/fee-rules.md#would-have-been-included.
   */
  next_block_floor_sat_vb: number;
  /**
   * Where it comes from: the first projected block's 10th-percentile rate (at least the relay
   * minimum) when it is full, the relay minimum (the minimum tier) while it has room, the fastest
   * tier when the upstream projects no blocks (Esplora, Core).
   */
  floor_source: 'projected_block' | 'minimum_tier' | 'fastest_tier';
  mempool_vsize: number;
  mempool_count: number;
  projected_block_count: number;
  tip_height: number | null;
}

/** Reads the fee market out of a validated snapshot. */
export function marketFromSnapshot(snapshot: RecordedSnapshot): FeeMarket {
  const first = snapshot.projected_blocks[0];
  let floor: number;
  let source: FeeMarket['floor_source'];
  if (!first) {
    floor = snapshot.tiers.fastest;
    source = 'fastest_tier';
  } else {
    const { full, entry } = projectedBlockEntry(first, snapshot.tiers.minimum);
    floor = entry;
    source = full ? 'projected_block' : 'minimum_tier';
  }
  return {
    tiers: snapshot.tiers,
    next_block_floor_sat_vb: roundRate3(floor),
    floor_source: source,
    mempool_vsize: snapshot.mempool.vsize,
    mempool_count: snapshot.mempool.count,
    projected_block_count: Math.ceil(snapshot.mempool.vsize / 1_000_000),
    tip_height: snapshot.tip_height,
  };
}

/** The highest tier a rate meets (`below_minimum` when it meets none). */
export function tierMet(rate: number, tiers: FeeTiers): TierName | 'below_minimum' {
  const milli = toMilliSatPerVb(rate);
  for (const name of TIER_NAMES) if (milli >= toMilliSatPerVb(tiers[name])) return name;
  return 'below_minimum';
}

/** fee / vsize in sat/vB, to three decimals (integer arithmetic on milli-sats, half up). */
export function feeRate(feeSat: number, vsize: number): number {
  return Math.floor((feeSat * 2000 + vsize) / (2 * vsize)) / 1000;
}

/** Nearest rank percentile (p in 0–100) of numbers, without sorting the caller's array. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** Median (nearest rank) of numbers. */
export const median = (values: readonly number[]) => percentile(values, 50);
