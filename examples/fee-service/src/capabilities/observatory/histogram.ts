/**
 * A mergeable histogram of non-negative integers (overpayments in sats at 140 vB, or msat/vB), so
 * a window's median and p90 come from adding histograms instead of rereading every judged estimate.
 *
 * Values below {@link EXACT_LIMIT} have a bin each and are exact; above it, each power of two is
 * split into {@link SUB_BINS} bins and a quantile reports its bin's midpoint (within 1/64 ≈ 1.6 %
 * of the true value). The bins are few enough ({@link BIN_COUNT}) for a day's histogram to be a
 * dense array, which is what keeps a month's scoreboard cheap.
 */

/** Values below this are counted exactly. */
export const EXACT_LIMIT = 256;
/** Bins per power of two above {@link EXACT_LIMIT}. */
export const SUB_BINS = 32;
const EXACT_BITS = 8; // log2(EXACT_LIMIT)
const SUB_BITS = 5; // log2(SUB_BINS)
/** Largest value kept as itself; larger ones are clamped (2^31 sats is 21 BTC at 140 vB). */
export const MAX_VALUE = 2 ** 31 - 1;
/** Number of bins. */
export const BIN_COUNT = EXACT_LIMIT + (31 - EXACT_BITS) * SUB_BINS;

/** The bin of a value (clamped to 0 … {@link MAX_VALUE}). */
export function binOf(value: number): number {
  const v = Math.min(MAX_VALUE, Math.max(0, Math.floor(value)));
  if (v < EXACT_LIMIT) return v;
  const exponent = 31 - Math.clz32(v); // floor(log2 v), ≥ EXACT_BITS
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

/** A dense histogram: one count per bin. */
export type DenseHistogram = Float64Array;

export function denseHistogram(): DenseHistogram {
  return new Float64Array(BIN_COUNT);
}

/** Adds a sparse histogram times `sign` into a dense one; returns the count added. */
export function addSparse(target: DenseHistogram, histogram: SparseHistogram, sign = 1): number {
  let total = 0;
  for (const [bin, count] of histogram) {
    target[bin] = target[bin]! + sign * count;
    total += count;
  }
  return sign * total;
}

/** Adds one dense histogram into another, bins `0 … upTo` (the source's highest non-empty bin). */
export function addDense(target: DenseHistogram, source: DenseHistogram, upTo = BIN_COUNT - 1): void {
  for (let bin = 0; bin <= upTo; bin += 1) target[bin] = target[bin]! + source[bin]!;
}

/**
 * Nearest-rank quantiles of a dense histogram holding `total` observations, for ascending `qs`
 * (0 < q ≤ 1): the q-quantile is the smallest value with at least ceil(q × total) observations at
 * or below it. Undefined when empty.
 */
export function quantilesOf(
  histogram: DenseHistogram,
  total: number,
  qs: readonly number[],
): (number | undefined)[] {
  if (total <= 0) return qs.map(() => undefined);
  const out: (number | undefined)[] = [];
  let bin = 0;
  let seen = histogram[0]!;
  for (const q of qs) {
    const rank = Math.max(1, Math.ceil(q * total));
    while (seen < rank && bin < BIN_COUNT - 1) {
      bin += 1;
      seen += histogram[bin]!;
    }
    out.push(valueOfBin(bin));
  }
  return out;
}

/** Accumulates sparse histograms and answers nearest-rank quantiles (see {@link quantilesOf}). */
export class HistogramSum {
  private readonly counts = denseHistogram();
  total = 0;

  add(histogram: SparseHistogram): void {
    this.total += addSparse(this.counts, histogram);
  }

  quantiles(qs: readonly number[]): (number | undefined)[] {
    return quantilesOf(this.counts, this.total, qs);
  }
}

/** `[[bin, count], …]` for storage. */
export function histogramToJson(histogram: SparseHistogram): [number, number][] {
  return [...histogram].sort((a, b) => a[0] - b[0]);
}

export function histogramFromJson(entries: readonly (readonly [number, number])[]): SparseHistogram {
  return new Map(entries.map(([bin, count]) => [bin, count]));
}
