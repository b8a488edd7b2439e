// How the fee figures the simulator serves are derived, each the way its real source does it:
// mempool.space's histogram, projected blocks and recommended tiers, Esplora's per-target
// estimates, and Bitcoin Core's estimatesmartfee from the blocks already mined; and the order a
// miner takes transactions in. Pure functions of the sorted mempool or the chain; SimulationModel
// (model.ts) hands them its state.
import type { MempoolBlockView, RecommendedFees, SimBlock, SimTx } from './types';

/** A block's vsize, vB. */
export const BLOCK_VSIZE = 1_000_000;
/** Room left for the coinbase when filling a block. */
export const BLOCK_TX_VSIZE = 999_000;

const ceil3 = (x: number) => Math.ceil(x * 1000 - 1e-6) / 1000;
/** Rounds to three decimals (sat/vB as mempool.space's precise endpoints write them). */
export const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The order a miner takes transactions in: rate descending, then arrival. */
export const byRateDesc = (a: SimTx, b: SimTx) => b.rate - a.rate || a.seq - b.seq;

/** Two lists sorted {@link byRateDesc} merged into one, in O(n). */
export function mergeByRate(sorted: readonly SimTx[], incoming: readonly SimTx[]): SimTx[] {
  const merged: SimTx[] = new Array(sorted.length + incoming.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < sorted.length && j < incoming.length) {
    merged[k++] = byRateDesc(sorted[i]!, incoming[j]!) <= 0 ? sorted[i++]! : incoming[j++]!;
  }
  while (i < sorted.length) merged[k++] = sorted[i++]!;
  while (j < incoming.length) merged[k++] = incoming[j++]!;
  return merged;
}

/** Rate at a fraction of the vsize of a list sorted by rate descending. */
function rateAtVsizeFraction(sortedDesc: readonly SimTx[], fraction: number): number {
  const total = sortedDesc.reduce((sum, tx) => sum + tx.vsize, 0);
  const target = total * fraction;
  let acc = 0;
  for (const tx of sortedDesc) {
    acc += tx.vsize;
    if (acc >= target) return tx.rate;
  }
  return sortedDesc.at(-1)?.rate ?? 0;
}

/** [min, p10, p25, p50, p75, p90, max] of a block's rates, by vsize (low to high). */
export function feeRangeOf(sortedDesc: readonly SimTx[]): number[] {
  if (sortedDesc.length === 0) return [];
  const pct = (p: number) => rateAtVsizeFraction(sortedDesc, 1 - p);
  return [sortedDesc.at(-1)!.rate, pct(0.1), pct(0.25), pct(0.5), pct(0.75), pct(0.9), sortedDesc[0]!.rate];
}

/** `/api/mempool` of a sorted mempool: count, vsize, total_fee and the fee histogram ([rate, vsize] by rate desc). */
export function mempoolInfoOf(sorted: readonly SimTx[]) {
  const vsize = sorted.reduce((sum, tx) => sum + tx.vsize, 0);
  const totalFee = sorted.reduce((sum, tx) => sum + tx.fee, 0);
  const histogram: [number, number][] = [];
  // mempool/electrs buckets: a new bucket every ~100,000 vB, labelled by its lowest rate
  let bucketVsize = 0;
  for (const tx of sorted) {
    bucketVsize += tx.vsize;
    if (bucketVsize >= 100_000) {
      histogram.push([round3(tx.rate), bucketVsize]);
      bucketVsize = 0;
    }
  }
  if (bucketVsize > 0 && sorted.length > 0) histogram.push([round3(sorted.at(-1)!.rate), bucketVsize]);
  return { count: sorted.length, vsize, total_fee: totalFee, fee_histogram: histogram };
}

/** A sorted mempool cut into projected blocks: up to 7 full blocks and an 8th "stack" holding the rest. */
export function projectBlocks(sorted: readonly SimTx[]): SimTx[][] {
  const groups: SimTx[][] = [];
  let current: SimTx[] = [];
  let vsize = 0;
  for (const tx of sorted) {
    if (groups.length < 7 && vsize + tx.vsize > BLOCK_TX_VSIZE && current.length > 0) {
      groups.push(current);
      current = [];
      vsize = 0;
    }
    current.push(tx);
    vsize += tx.vsize;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** One projected block as mempool.space's `/api/v1/fees/mempool-blocks` writes it. */
export function mempoolBlockView(txs: readonly SimTx[]): MempoolBlockView {
  const range = feeRangeOf(txs);
  return {
    blockSize: txs.reduce((sum, tx) => sum + tx.size, 0),
    blockVSize: txs.reduce((sum, tx) => sum + tx.vsize, 0),
    nTx: txs.length,
    totalFees: txs.reduce((sum, tx) => sum + tx.fee, 0),
    medianFee: range[3] ?? 0,
    feeRange: range,
  };
}

/**
 * Recommended tiers the way mempool.space derives them from its projected blocks: the median
 * of block 1, 2, 3 smoothed with the previous tier, a nearly empty block counting as the floor,
 * economy capped at twice the minimum, then forced monotonic. `precise` keeps three decimals
 * (and a floor at the relay fee, possibly below 1); otherwise rates round up to integers ≥ 1.
 */
export function recommendedFeesOf(
  blocks: readonly MempoolBlockView[],
  minRelayFee: number,
  precise: boolean,
): RecommendedFees {
  const round = precise ? ceil3 : Math.ceil;
  const minimumFee = precise ? ceil3(minRelayFee) : Math.max(1, Math.ceil(minRelayFee));
  const floor = precise ? minimumFee : Math.max(minimumFee, 1);
  const optimise = (block: MempoolBlockView, next: MempoolBlockView | undefined, previous?: number) => {
    const use = previous === undefined ? block.medianFee : (block.medianFee + previous) / 2;
    if (block.blockVSize <= 500_000) return floor;
    if (block.blockVSize <= 950_000 && !next) {
      return Math.max(round((use * (block.blockVSize - 500_000)) / 500_000), floor);
    }
    return Math.max(round(use), floor);
  };
  if (blocks.length === 0) {
    return { fastestFee: floor, halfHourFee: floor, hourFee: floor, economyFee: minimumFee, minimumFee };
  }
  const first = optimise(blocks[0]!, blocks[1]);
  const second = blocks[1] ? optimise(blocks[1], blocks[2], first) : floor;
  const third = blocks[2] ? optimise(blocks[2], blocks[3], second) : floor;
  const economy = Math.max(minimumFee, Math.min(2 * minimumFee, third));
  const hour = Math.max(third, economy);
  const halfHour = Math.max(second, hour);
  const fastest = Math.max(first, halfHour);
  const fix = precise ? round3 : (x: number) => x;
  return {
    fastestFee: fix(fastest),
    halfHourFee: fix(halfHour),
    hourFee: fix(hour),
    economyFee: fix(economy),
    minimumFee: fix(minimumFee),
  };
}

/** Running vsize of a sorted mempool: entry i is the vsize of transactions 0…i. */
export function cumulativeVsizeOf(sorted: readonly SimTx[]): Float64Array {
  const values = new Float64Array(sorted.length);
  let acc = 0;
  for (let i = 0; i < sorted.length; i += 1) {
    acc += sorted[i]!.vsize;
    values[i] = acc;
  }
  return values;
}

/**
 * Rate needed to confirm within `target` blocks: the lowest rate inside the first `target`
 * million vB, a little above it, or the relay floor when the mempool fits.
 * @param cumulative {@link cumulativeVsizeOf} of `sorted`
 */
export function estimateForTargetOf(
  sorted: readonly SimTx[],
  cumulative: Float64Array,
  target: number,
  minRelayFee: number,
): number {
  const budget = target * BLOCK_VSIZE;
  // first transaction whose cumulative vsize passes the budget (binary search)
  let lo = 0;
  let hi = cumulative.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid]! > budget) hi = mid;
    else lo = mid + 1;
  }
  if (lo >= sorted.length) return round3(minRelayFee);
  return round3(Math.max(minRelayFee, sorted[lo]!.rate * 1.01));
}

/**
 * Bitcoin Core's `estimatesmartfee` as the simulator models it: from the blocks already mined,
 * not from the mempool, as Core does. `economical` averages, with a short half-life, the rate
 * that got into recent blocks at a depth that shrinks with the target (the median for 1 block,
 * down to the block's minimum from 12): smooth, and late both ways when fees move. `conservative`
 * also looks over a long half-life one quantile higher and keeps the larger, plus a margin: it
 * rarely misses and overpays.
 */
export function smartFeeOf(
  blocks: readonly SimBlock[],
  target: number,
  mode: 'economical' | 'conservative',
  minRelayFee: number,
): number {
  // feeRange indices: 0 min, 1 p10, 2 p25, 3 p50, 4 p75, 5 p90, 6 max
  const index = target <= 1 ? 3 : target === 2 ? 2 : target <= 6 ? 1 : 0;
  const economical = decayedBlockRate(blocks, index, 6, minRelayFee);
  const rate =
    mode === 'economical'
      ? economical
      : Math.max(economical, decayedBlockRate(blocks, Math.min(6, index + 1), 48, minRelayFee)) * 1.15;
  return round3(Math.max(minRelayFee, rate));
}

/** Mean of a feeRange entry over recent blocks, each weighted by 2^(−age / halfLife). */
function decayedBlockRate(
  blocks: readonly SimBlock[],
  index: number,
  halfLife: number,
  minRelayFee: number,
): number {
  let weighted = 0;
  let weights = 0;
  for (let i = blocks.length - 1, age = 0; i >= 0 && age < 4 * halfLife; i -= 1, age += 1) {
    const rate = blocks[i]!.feeRange[index];
    if (rate === undefined) continue;
    const weight = 2 ** (-age / halfLife);
    weighted += weight * rate;
    weights += weight;
  }
  return weights === 0 ? minRelayFee : weighted / weights;
}

/**
 * Esplora `/fee-estimates` with its real gaps (some targets missing) and, per scenario
 * (`nonMonotonic`), a non-monotonic entry.
 */
export function esploraFeeEstimates(
  estimateForTarget: (target: number) => number,
  nonMonotonic: boolean,
): Record<string, number> {
  const targets = [...Array.from({ length: 25 }, (_, i) => i + 1), 144, 504, 1008].filter(
    (t) => ![11, 14, 17, 19, 22].includes(t),
  );
  const out: Record<string, number> = {};
  for (const t of targets) out[String(t)] = estimateForTarget(t);
  if (nonMonotonic && out['2'] !== undefined) {
    out['3'] = round3(out['2'] * 1.05 + 0.5);
  }
  return out;
}
