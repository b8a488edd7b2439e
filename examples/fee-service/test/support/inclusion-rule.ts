// The rule "would have been included" and the scoreboard's figures, written again from
// docs/fee-rules.md (nothing imported from src/): a test recomputes what the service sells from the
// estimates and block statistics it also sells, and compares.

/** A block as `/api/v1/fees/observatory/block-stats` gives it (the fields the rule reads). */
export interface SoldBlock {
  height: number;
  weight: number;
  p10: number;
  p75: number;
  relay_minimum: number;
  full: boolean;
  entry_rate: number;
}

/** An estimate as `/api/v1/fees/observatory/estimates` gives it. */
export interface SoldEstimate {
  source: string;
  target: number;
  rate_sat_vb: number;
  tip_height: number;
  status: string;
  judgment: {
    hit: boolean;
    first_fit: number | null;
    overpay: boolean;
    overpayment_sat_vb: number;
    overpayment_sats_140: number;
    entry_rate_sat_vb: number;
  } | null;
}

/** Full from 99 % of the 4,000,000 WU limit (docs/fee-rules.md#would-have-been-included). */
export const FULL_BLOCK_WEIGHT = 3_960_000;
const msat = (satVb: number) => Math.round(satVb * 1000);
/** A fee in sats at 140 vB, rounded up. */
const fee140 = (rateMsat: number) => Math.ceil((rateMsat * 140) / 1000);

/** The lowest rate that would have been included, msat/vB: the relay minimum with room, else max(relay minimum, p10). */
export function entryRateMsat(block: SoldBlock): number {
  const relay = msat(block.relay_minimum);
  return block.weight >= FULL_BLOCK_WEIGHT ? Math.max(relay, msat(block.p10)) : relay;
}

export interface Rejudged {
  hit: boolean;
  firstFit: number | null;
  overpay: boolean;
  overpaymentSats: number;
  /** The rate that would have made it, msat/vB. */
  entryMsat: number;
}

/** Judges an estimate on blocks h+1 … h+target; undefined when one of them is not sold. */
export function rejudge(
  estimate: SoldEstimate,
  blocks: ReadonlyMap<number, SoldBlock>,
): Rejudged | undefined {
  const q = msat(estimate.rate_sat_vb);
  let lowest = Number.POSITIVE_INFINITY;
  for (let height = estimate.tip_height + 1; height <= estimate.tip_height + estimate.target; height += 1) {
    const block = blocks.get(height);
    if (!block) return undefined;
    const entry = entryRateMsat(block);
    if (q >= entry) {
      return {
        hit: true,
        firstFit: height,
        overpay: q > msat(block.p75),
        overpaymentSats: Math.max(0, fee140(q) - fee140(entry)),
        entryMsat: entry,
      };
    }
    lowest = Math.min(lowest, entry);
  }
  return { hit: false, firstFit: null, overpay: false, overpaymentSats: 0, entryMsat: lowest };
}

/** Nearest-rank median, undefined when empty. */
export function nearestRankMedian(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(0.5 * sorted.length)) - 1];
}

export interface RecomputedRow {
  n: number;
  hit_rate: number;
  miss_rate: number;
  overpay_rate: number;
  median_overpayment_sats_140: number | undefined;
  median_miss_entry_fee_sats_140: number | undefined;
  cost: number;
}

const share = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 10_000;

/** A scoreboard row from its judged estimates: cost = median overpayment + 10 × miss rate × median miss entry fee. */
export function recomputeRow(judgments: readonly Rejudged[]): RecomputedRow {
  const hits = judgments.filter((j) => j.hit);
  const misses = judgments.filter((j) => !j.hit);
  const medianOverpayment = nearestRankMedian(hits.map((j) => j.overpaymentSats));
  const medianMissFee = nearestRankMedian(misses.map((j) => fee140(j.entryMsat)));
  const n = judgments.length;
  return {
    n,
    hit_rate: share(hits.length, n),
    miss_rate: share(misses.length, n),
    overpay_rate: share(hits.filter((j) => j.overpay).length, n),
    median_overpayment_sats_140: medianOverpayment,
    median_miss_entry_fee_sats_140: medianMissFee,
    cost: (medianOverpayment ?? 0) + 10 * (misses.length / n) * (medianMissFee ?? 0),
  };
}

/**
 * Whether a figure the scoreboard reports from its histograms matches an exact one: equal below
 * 256 sats, within 1.6 % above (docs/fee-rules.md#observatory-scoring).
 */
export function sameHistogramFigure(reported: number | null, exact: number | undefined): boolean {
  if (exact === undefined) return reported === null;
  if (reported === null) return false;
  return exact < 256 ? reported === exact : Math.abs(reported - exact) <= 0.016 * exact;
}
