/**
 * A mergeable histogram of non-negative integers (overpayments in sats at 140 vB), so a window's
 * median and p90 come from adding hourly histograms instead of rereading every judged estimate.
 *
 * Values below {@link EXACT_LIMIT} have a bin each and are exact; above it, each power of two is
 * split into {@link SUB_BINS} bins and a quantile reports its bin's midpoint (within 1/128 ≈ 0.8 %
 * of the true value). An overpayment of 1,024 sats at 140 vB is already 7.3 sat/vB too much.
 */

/** Values below this are counted exactly. */
export const EXACT_LIMIT = 1024;
/** Bins per power of two above {@link EXACT_LIMIT}. */
export const SUB_BINS = 64;
const EXACT_BITS = 10; // log2(EXACT_LIMIT)
const SUB_BITS = 6; // log2(SUB_BINS)
/** Largest value kept as itself; larger ones are clamped (2^31 sats is 21 BTC at 140 vB). */
export const MAX_VALUE = 2 ** 31 - 1;
/** Number of bins. */
export const BIN_COUNT = EXACT_LIMIT + (31 - EXACT_BITS) * SUB_BINS;

/** The bin of a value (clamped to 0 … {@link MAX_VALUE}). */
export function binOf(value: number): number {
  const v = Math.min(MAX_VALUE, Math.max(0, Math.floor(value)));
  if (v < EXACT_LIMIT) return v;
  const exponent = 31 - Math.clz32(v); // floor(log2 v), ≥ 10
  const sub = (v - 2 ** exponent) >>> (exponent - SUB_BITS);
  return EXACT_LIMIT + (exponent - EXACT_BITS) * SUB_BINS + sub;
}

/** The value a bin reports: itself when exact, else the bin's midpoint rounded down. */
export function valueOfBin(bin: number): number {
  if (bin < EXACT_LIMIT) return bin;
  const exponent = EXACT_BITS + Math.floor((bin - EXACT_LIMIT) / SUB_BINS);
  const sub = (bin - EXACT_LIMIT) % SUB_BINS;
  const width = 2 ** (exponent - SUB_BITS);
  return 2 ** exponent + sub * width + Math.floor(width / 2);
}

/** Sparse histogram: bin → count (counts may go down when a reorg takes a judgment back). */
export type SparseHistogram = Map<number, number>;

/** Adds `delta` observations of `value`; empty bins are deleted so the map stays small. */
export function addToHistogram(histogram: SparseHistogram, value: number, delta: number): void {
  const bin = binOf(value);
  const count = (histogram.get(bin) ?? 0) + delta;
  if (count === 0) histogram.delete(bin);
  else histogram.set(bin, count);
}

/**
 * Accumulates sparse histograms into a dense one and answers nearest-rank quantiles: the
 * q-quantile is the smallest value with at least ceil(q × n) observations at or below it.
 */
export class HistogramSum {
  private readonly counts = new Float64Array(BIN_COUNT);
  private readonly touched: number[] = [];
  total = 0;

  add(histogram: SparseHistogram): void {
    for (const [bin, count] of histogram) {
      const before = this.counts[bin]!;
      if (before === 0) this.touched.push(bin);
      this.counts[bin] = before + count;
      this.total += count;
    }
  }

  /** Nearest-rank quantiles for ascending `qs` (0 < q ≤ 1); undefined when empty. */
  quantiles(qs: readonly number[]): (number | undefined)[] {
    if (this.total <= 0) return qs.map(() => undefined);
    const bins = this.touched.filter((bin) => this.counts[bin]! > 0).sort((a, b) => a - b);
    const out: (number | undefined)[] = [];
    let index = 0;
    let seen = 0;
    for (const q of qs) {
      const rank = Math.max(1, Math.ceil(q * this.total));
      while (index < bins.length && seen + this.counts[bins[index]!]! < rank) {
        seen += this.counts[bins[index]!]!;
        index += 1;
      }
      out.push(index < bins.length ? valueOfBin(bins[index]!) : valueOfBin(bins.at(-1)!));
    }
    return out;
  }
}

/** `[[bin, count], …]` for storage. */
export function histogramToJson(histogram: SparseHistogram): [number, number][] {
  return [...histogram].sort((a, b) => a[0] - b[0]);
}

export function histogramFromJson(entries: readonly (readonly [number, number])[]): SparseHistogram {
  return new Map(entries.map(([bin, count]) => [bin, count]));
}
