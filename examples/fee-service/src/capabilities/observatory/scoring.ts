import { entryRate } from '../../domain/inclusion';
import type { BlockPercentiles, Judgment } from '../history/types';

/**
 * The observatory's scoring rules, as pure functions. Rates are integer milli-sat/vB (msat/vB)
 * throughout, so "q reaches the entry rate" is an exact integer comparison and an overpayment is
 * never a float difference (see `domain/fee-math.ts`).
 *
 * An estimate `(source, target, q, observed_at, tip height h)` is judged on blocks h+1 … h+target
 * once the last of them exists, by the rule of `domain/inclusion.ts`
 * (docs/fee-rules.md#would-have-been-included): a block's entry rate is the relay minimum when it
 * had room, else its p10 (at least the relay minimum).
 * - hit ⇔ q would have been included in at least one block of the window (q ≥ its entry rate);
 * - first fit = the first block of the window that would have included q;
 * - overpay ⇔ hit and q > p75 of the first fit; "within" ⇔ hit and not overpay;
 * - overpayment = max(0, q − entry rate of the first fit) in sat/vB, and in sats for a 140 vB
 *   transaction: ceil(140 q) − ceil(140 × entry rate), fees being rounded up to whole sats;
 * - a miss's entry rate is the lowest entry rate of its window: what q needed to be included.
 *
 * A source's row ranks by `cost = median overpayment + 10 × miss rate × median miss entry fee`
 * (sats at 140 vB): a miss costs ten times the fee that would have been included within the target
 * — the payment has to be replaced at that fee or more, after waiting past the horizon — so
 * missing 10 % of windows costs as much as overpaying by that fee. The penalty follows the market:
 * a miss of a relay-minimum quote in a calm hour costs little, a miss in a spike costs much, and an
 * estimator overpaying tenfold in a calm market does not outrank one that quotes what gets in.
 */

/** Size of the reference transaction of every sats figure (a one-input, two-output P2WPKH payment). */
export const REFERENCE_VSIZE = 140;
/** A miss costs this many times the fee that would have been included within the target. */
export const MISS_COST_MULTIPLE = 10;

/** What a judgment needs of an estimate. */
export interface EstimateToJudge {
  /** Quoted rate, msat/vB. */
  rate: number;
  /** Confirmation target, blocks (≥ 1). */
  target: number;
  /** Chain height the source saw when it quoted. */
  tipHeight: number;
}

/** Heights judging an estimate: h+1 … h+target. */
export function windowOf(estimate: Pick<EstimateToJudge, 'target' | 'tipHeight'>): {
  first: number;
  last: number;
} {
  return { first: estimate.tipHeight + 1, last: estimate.tipHeight + estimate.target };
}

/** Fee in whole sats of `vsize` vB at `rateMsat` msat/vB, rounded up. */
export function feeSatsAt(rateMsat: number, vsize = REFERENCE_VSIZE): number {
  return Math.ceil((rateMsat * vsize) / 1000);
}

/**
 * Judges an estimate on the blocks of its window.
 * @param blocks the window's blocks, any order; every height h+1 … h+target must be present
 * @throws RangeError when a block of the window is missing (an estimate is judged only once its
 *   whole window exists)
 * @example judgeEstimate({ rate: 5000, target: 1, tipHeight: 9 },
 *   [{ height: 10, weight: 3_996_000, p10: 4000, p75: 6000, relayMinimum: 1000 }])
 *   // full block: { hit: true, firstFit: 10, overpay: false, overpaymentMsat: 1000, overpaymentSats: 140 }
 */
export function judgeEstimate(estimate: EstimateToJudge, blocks: readonly BlockPercentiles[]): Judgment {
  const { first, last } = windowOf(estimate);
  const byHeight = new Map(blocks.map((block) => [block.height, block]));
  let lowest = Number.POSITIVE_INFINITY;
  for (let height = first; height <= last; height += 1) {
    const block = byHeight.get(height);
    if (!block) throw new RangeError(`block ${height} of the window ${first}…${last} is missing`);
    const entry = entryRate(block, block.relayMinimum);
    if (estimate.rate >= entry) {
      return {
        hit: true,
        firstFit: height,
        overpay: estimate.rate > block.p75,
        overpaymentMsat: Math.max(0, estimate.rate - entry),
        overpaymentSats: Math.max(0, feeSatsAt(estimate.rate) - feeSatsAt(entry)),
        entryMsat: entry,
      };
    }
    lowest = Math.min(lowest, entry);
  }
  return {
    hit: false,
    firstFit: undefined,
    overpay: false,
    overpaymentMsat: 0,
    overpaymentSats: 0,
    entryMsat: lowest,
  };
}

/**
 * cost = median overpayment + {@link MISS_COST_MULTIPLE} × miss rate × median miss entry fee, all
 * in sats at 140 vB.
 * @example costOf({ medianOverpaymentSats: 5, missRate: 0.3, medianMissEntryFeeSats: 420 }) // 1265
 */
export function costOf(row: {
  medianOverpaymentSats: number;
  missRate: number;
  medianMissEntryFeeSats: number;
}): number {
  return row.medianOverpaymentSats + MISS_COST_MULTIPLE * row.missRate * row.medianMissEntryFeeSats;
}

/** What the ranking needs of a row. */
export interface RankableRow {
  source: string;
  target: number;
  /** Undefined when no estimate of the row has been judged yet. */
  cost: number | undefined;
}

/**
 * Orders rows by horizon (target ascending), then by cost within the horizon (lowest first), ties
 * by source name, and numbers them from 1 within each horizon. A row without a cost (nothing of it
 * judged) is not ranked: it comes last in its horizon with rank undefined. Rows of different
 * targets are never compared.
 */
export function rankRows<T extends RankableRow>(rows: readonly T[]): (T & { rank: number | undefined })[] {
  const sorted = [...rows].sort(
    (a, b) =>
      a.target - b.target ||
      (a.cost === undefined ? 1 : 0) - (b.cost === undefined ? 1 : 0) ||
      (a.cost ?? 0) - (b.cost ?? 0) ||
      (a.source < b.source ? -1 : a.source > b.source ? 1 : 0),
  );
  let rank = 0;
  let target: number | undefined;
  return sorted.map((row) => {
    rank = row.target === target ? rank + 1 : 1;
    target = row.target;
    return { ...row, rank: row.cost === undefined ? undefined : rank };
  });
}
