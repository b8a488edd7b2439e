import { BLOCK_VSIZE, ILLUSTRATION_VBYTES } from './constants';

/**
 * Fee rates arrive as JSON numbers with at most three decimals (mempool.space precise, Core's
 * BTC/kvB × 100,000). Subtracting them as doubles gives answers such as 2.023 − 0.2 =
 * 1.8229999999999997, so every figure is computed in integer milli-sat/vB and converted back
 * once: an integer divided by 1000 is the double closest to the decimal, which JSON prints as
 * the short decimal (1.823).
 */

/** Converts a sat/vB rate to integer milli-sat/vB (rounded to the nearest milli-sat). */
export function toMilliSatPerVb(rate: number): number {
  return Math.round(rate * 1000);
}

/** Converts integer milli-sat/vB back to a sat/vB JSON number. */
export function fromMilliSatPerVb(milli: number): number {
  return milli / 1000;
}

/** Rounds a rate to three decimals (the precision mempool.space's precise endpoint uses). */
export function roundRate3(rate: number): number {
  return fromMilliSatPerVb(toMilliSatPerVb(rate));
}

/**
 * Fee in whole sats for a rate and a virtual size, rounded up (docs/fee-service-contract.md#what-the-service-does).
 * @example feeForVsize(2.023, 140) // 284
 */
export function feeForVsize(rate: number, vsize: number): number {
  const milliSats = toMilliSatPerVb(rate) * vsize;
  return Math.ceil(milliSats / 1000);
}

/**
 * Round-half-up of `numerator / denominator` to one decimal, for non-negative integers,
 * computed without floating-point division before the final step.
 */
function ratioPercentRound1(numerator: number, denominator: number): number {
  // tenths of a percent = round(1000 × n / d) = floor((2000 n + d) / (2 d))
  const tenths = Math.floor((2000 * numerator + denominator) / (2 * denominator));
  return tenths / 10;
}

/** Converts a BTC/kvB rate (Bitcoin Core) to sat/vB without float error: sat/kvB is milli-sat/vB. */
export function btcPerKvbToSatPerVb(btcPerKvb: number): number {
  // A BTC amount has at most 8 decimals, so × 1e8 then rounding recovers the exact integer.
  return fromMilliSatPerVb(Math.round(btcPerKvb * 1e8));
}

/** Number of 1,000,000 vB blocks the mempool fills: ceil(vsize / 1,000,000), 0 when empty. */
export function projectedBlockCount(vsize: number): number {
  return vsize <= 0 ? 0 : Math.ceil(vsize / BLOCK_VSIZE);
}

/** The savings figures (`docs/fee-rules.md#derived-figures`). */
export interface PotentialSavings {
  /** fastest − economy, sat/vB. */
  sat_vb: number;
  /** round1(100 × sat_vb / fastest), 0 when fastest is 0. */
  percent: number;
  /** ceil(140 × fastest) − ceil(140 × economy), sats. */
  at_140_vbytes_sat: number;
}

/**
 * Computes the potential savings of waiting from the fastest to the economy tier.
 * Negative gaps (never produced by validated snapshots) are reported as 0.
 * @example potentialSavings(2.023, 0.2) // { sat_vb: 1.823, percent: 90.1, at_140_vbytes_sat: 256 }
 */
export function potentialSavings(fastest: number, economy: number): PotentialSavings {
  const fastestMilli = toMilliSatPerVb(fastest);
  const economyMilli = toMilliSatPerVb(economy);
  const gapMilli = Math.max(0, fastestMilli - economyMilli);
  const percent = fastestMilli === 0 ? 0 : ratioPercentRound1(gapMilli, fastestMilli);
  // Each illustrative fee rounds up on its own, as a wallet would charge it; then the difference.
  const at140 = Math.max(
    0,
    feeForVsize(fastest, ILLUSTRATION_VBYTES) - feeForVsize(economy, ILLUSTRATION_VBYTES),
  );
  return { sat_vb: fromMilliSatPerVb(gapMilli), percent, at_140_vbytes_sat: at140 };
}
