import { roundRate3 } from './fee-math';

/**
 * "Would have been included": the one rule every resource judges a fee rate against a block by
 * (`docs/fee-rules.md#would-have-been-included`). The scoreboard judges quotes on mined blocks
 * with it, the next-block prediction and the broadcast on the projected block, the explainers on
 * the block that confirmed a transaction.
 *
 * - A block is **full** from {@link FULL_BLOCK_WEIGHT}: a miner's template stops adding
 *   transactions only when the next one no longer fits, so a block that stopped short of it took
 *   every transaction its miner had that paid the relay minimum.
 * - In a block that **had room**, a rate would have been included when it met the relay minimum.
 * - In a **full** block, when it reached the block's lowest included rate, read as its 10th
 *   percentile by vsize (never below the relay minimum). The minimum itself is set by a single
 *   transaction that need not have competed on fee — a CPFP parent counted at its own rate, a
 *   transaction the miner prioritised or was paid for out of band — so it understates what a new
 *   transaction needed; p10 needs a tenth of the block at or below it, and errs upward: a verdict
 *   on a full block is a miss sooner than a false hit.
 *
 * The functions take rates in any one unit (sat/vB or integer milli-sat/vB) and give them back in it.
 */

/** Consensus limit of a block, weight units. */
export const MAX_BLOCK_WEIGHT = 4_000_000;
/** A block of at least this weight (99 % of the limit) is full. */
export const FULL_BLOCK_WEIGHT = 3_960_000;
/** The same in virtual bytes: 990,000 vB. */
export const FULL_BLOCK_VSIZE = FULL_BLOCK_WEIGHT / 4;

/** What the rule needs of a block: its weight and its 10th-percentile fee rate. */
export interface InclusionBlock {
  /** Weight units (a projection's vsize × 4). */
  weight: number;
  /** 10th-percentile fee rate by vsize. */
  p10: number;
}

/** Whether a block of this weight was full. */
export function isFullBlock(weight: number): boolean {
  return weight >= FULL_BLOCK_WEIGHT;
}

/**
 * The entry rate of a block: the lowest rate that would have been included in it — the relay
 * minimum when it had room, else its 10th percentile, at least the relay minimum.
 * @example entryRate({ weight: 1_600_000, p10: 3 }, 1) // 1: the block had room
 * @example entryRate({ weight: 3_996_000, p10: 12.5 }, 1) // 12.5: full
 */
export function entryRate(block: InclusionBlock, relayMinimum: number): number {
  return isFullBlock(block.weight) ? Math.max(relayMinimum, block.p10) : relayMinimum;
}

/** Whether a rate would have been included in the block: it reached the block's {@link entryRate}. */
export function wouldBeIncluded(rate: number, block: InclusionBlock, relayMinimum: number): boolean {
  return rate >= entryRate(block, relayMinimum);
}

/** Percent of the consensus limit a block fills, one decimal. */
export function fullnessPercent(weight: number): number {
  return Math.round((1000 * weight) / MAX_BLOCK_WEIGHT) / 10;
}

/**
 * The entry rule as a sentence, for answers that show it (`rate` formatted by the caller).
 * @example entryRuleText({ weight: 1_600_000 }, '1 sat/vB') // 'the block had room (40% full): the relay minimum, 1 sat/vB'
 */
export function entryRuleText(
  block: Pick<InclusionBlock, 'weight'>,
  rate: string,
  tense: 'has' | 'had' = 'had',
): string {
  const percent = fullnessPercent(block.weight);
  return isFullBlock(block.weight)
    ? `the block ${tense === 'has' ? 'is' : 'was'} full (${percent}% of its weight limit): its 10th-percentile rate, ${rate}, stands for its lowest included rate`
    : `the block ${tense} room (${percent}% of its weight limit): the relay minimum, ${rate}`;
}

/**
 * A projected block as mempool.space lists it (`/api/v1/fees/mempool-blocks`: its vsize and its
 * `feeRange`, min, p10, …, max) read by the rule: its weight (vsize × 4), whether it is full, and
 * its entry rate — the relay minimum while it has room, its p10 (at least the relay minimum) once
 * full. A `feeRange` of another length than 7 is read at the same fraction of its positions; rates
 * are read to the 3 decimals every answer publishes them with.
 */
export function projectedBlockEntry(
  block: { block_vsize: number; fee_range: readonly number[] },
  relayMinimum: number,
): { weight: number; full: boolean; entry: number } {
  const weight = block.block_vsize * 4;
  const range = block.fee_range;
  const p10 = range.length === 0 ? relayMinimum : range[Math.round(0.1 * (range.length - 1))]!;
  return {
    weight,
    full: isFullBlock(weight),
    entry: roundRate3(entryRate({ weight, p10: roundRate3(p10) }, roundRate3(relayMinimum))),
  };
}
