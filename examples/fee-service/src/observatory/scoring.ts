/**
 * The observatory's scoring rules, as pure functions. Rates are integer milli-sat/vB (msat/vB)
 * throughout, so "q ≥ p10" is an exact integer comparison and an overpayment is never a float
 * difference (see `domain/fee-math.ts`).
 *
 * An estimate `(source, target, q, observed_at, tip height h)` is judged on blocks h+1 … h+target
 * once the last of them exists:
 * - hit ⇔ q ≥ p10 of at least one block of the window; a miss otherwise;
 * - first fit = the first block of the window with p10 ≤ q;
 * - overpay ⇔ hit and q > p75 of the first fit; "within" ⇔ hit and not overpay;
 * - overpayment = max(0, q − p10(first fit)) in sat/vB, and in sats for a 140 vB transaction:
 *   ceil(140 q) − ceil(140 p10), fees being rounded up to whole sats.
 *
 * A source's row ranks by `cost = median overpayment (sats at 140 vB) + 10 × miss rate × 1000`:
 * missing a 140 vB payment's window at a rate of 10 % costs as much as overpaying it by 1,000 sats,
 * so an estimator cannot buy hits by quoting high, and one quoting 1,000 sat/vB ranks last.
 */

/** Size of the reference transaction of every sats figure (a one-input, two-output P2WPKH payment). */
export const REFERENCE_VSIZE = 140;
/** Sats charged per unit of miss rate in the cost: 10 × 1000. */
export const MISS_PENALTY_SATS = 10 * 1000;

/** What a judgment needs of an estimate. */
export interface EstimateToJudge {
  /** Quoted rate, msat/vB. */
  rate: number;
  /** Confirmation target, blocks (≥ 1). */
  target: number;
  /** Chain height the source saw when it quoted. */
  tipHeight: number;
}

/** What a judgment needs of a block. */
export interface BlockPercentiles {
  height: number;
  /** 10th and 75th fee-rate percentile (by vsize), msat/vB. */
  p10: number;
  p75: number;
}

/** The verdict on one estimate. */
export interface Judgment {
  hit: boolean;
  /** Height of the first block of the window with p10 ≤ q (hits only). */
  firstFit: number | undefined;
  /** q > p75 of the first fit. */
  overpay: boolean;
  /** max(0, q − p10(first fit)), msat/vB; 0 for a miss. */
  overpaymentMsat: number;
  /** ceil(140 q) − ceil(140 p10(first fit)), sats, ≥ 0; 0 for a miss. */
  overpaymentSats: number;
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
 * @example judgeEstimate({ rate: 5000, target: 1, tipHeight: 9 }, [{ height: 10, p10: 4000, p75: 6000 }])
 *   // { hit: true, firstFit: 10, overpay: false, overpaymentMsat: 1000, overpaymentSats: 140 }
 */
export function judgeEstimate(estimate: EstimateToJudge, blocks: readonly BlockPercentiles[]): Judgment {
  const { first, last } = windowOf(estimate);
  const byHeight = new Map(blocks.map((block) => [block.height, block]));
  for (let height = first; height <= last; height += 1) {
    const block = byHeight.get(height);
    if (!block) throw new RangeError(`block ${height} of the window ${first}…${last} is missing`);
    if (estimate.rate >= block.p10) {
      return {
        hit: true,
        firstFit: height,
        overpay: estimate.rate > block.p75,
        overpaymentMsat: Math.max(0, estimate.rate - block.p10),
        overpaymentSats: Math.max(0, feeSatsAt(estimate.rate) - feeSatsAt(block.p10)),
      };
    }
  }
  return { hit: false, firstFit: undefined, overpay: false, overpaymentMsat: 0, overpaymentSats: 0 };
}

/** cost = median overpayment (sats at 140 vB) + 10 × miss rate × 1000. */
export function costOf(medianOverpaymentSats: number, missRate: number): number {
  return medianOverpaymentSats + MISS_PENALTY_SATS * missRate;
}

/** What the ranking needs of a row. */
export interface RankableRow {
  source: string;
  target: number;
  /** Undefined when no estimate of the row has been judged yet. */
  cost: number | undefined;
}

/**
 * Orders rows by horizon (target ascending), then by cost within the horizon (lowest first; rows
 * without a cost last), ties by source name, and numbers them from 1 within each horizon. Rows of
 * different targets are never compared.
 */
export function rankRows<T extends RankableRow>(rows: readonly T[]): (T & { rank: number })[] {
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
    return { ...row, rank };
  });
}
