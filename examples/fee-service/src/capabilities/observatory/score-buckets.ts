import type { StoredScoreBucket } from '../history/types';
import {
  addSparse,
  type DenseHistogram,
  denseHistogram,
  histogramFromJson,
  histogramToJson,
  type SparseHistogram,
} from './histogram';

/**
 * The score book's storage: per (source, target, clock hour) a bucket of counts and histograms,
 * per clock day the same summed into dense arrays, and the JSON form a history store keeps.
 */

export const HOUR_MS = 3_600_000;
export const HOURS_PER_DAY = 24;

/** The clock hour (hours since the epoch) of a time in ms. */
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS);
}

export const dayOf = (hour: number) => Math.floor(hour / HOURS_PER_DAY);

/**
 * The histograms each bucket keeps: the hits' overpayments in sats at 140 vB and in msat/vB, and
 * the misses' entry fees — the fee at 140 vB that would have been included within the target.
 */
export const HISTOGRAMS = ['overpaymentSats', 'overpaymentMsat', 'missEntrySats'] as const;
export type HistogramName = (typeof HISTOGRAMS)[number];
const STORED_NAMES = {
  overpaymentSats: 'overpayment_sats',
  overpaymentMsat: 'overpayment_msat',
  missEntrySats: 'miss_entry_sats',
} as const satisfies Record<HistogramName, string>;

/** One (source, target, hour) bucket. */
export interface ScoreBucket {
  source: string;
  target: number;
  hour: number;
  /** Polls of the source in this hour, and those that returned a valid value for the target. */
  polls: number;
  valid: number;
  /** Judged estimates, hits, overpays. */
  n: number;
  hits: number;
  overpays: number;
  histograms: Record<HistogramName, SparseHistogram>;
  /** Tip heights of the judged estimates (height → count): their windows are the evidence. */
  tipHeights: Map<number, number>;
  /** The histograms as packed arrays for fast adding; dropped when the bucket changes. */
  packed?: Record<HistogramName, PackedHistogram>;
}

/** A row's totals over one clock day: the sum of its hour buckets, histograms dense. */
export interface DayTotals {
  polls: number;
  valid: number;
  n: number;
  hits: number;
  overpays: number;
  histograms: Record<HistogramName, DenseHistogram>;
  /** Highest bin ever counted in each histogram (the rest is zero: adding stops there). */
  top: Record<HistogramName, number>;
  tipHeights: Map<number, number>;
  /** The union of the day's judged windows as sorted, disjoint intervals; rebuilt after a change. */
  windows: [number, number][] | undefined;
}

const eachHistogram = <T>(make: (name: HistogramName) => T) =>
  Object.fromEntries(HISTOGRAMS.map((name) => [name, make(name)])) as Record<HistogramName, T>;

export function emptyBucket(source: string, target: number, hour: number): ScoreBucket {
  return {
    source,
    target,
    hour,
    polls: 0,
    valid: 0,
    n: 0,
    hits: 0,
    overpays: 0,
    histograms: eachHistogram(() => new Map()),
    tipHeights: new Map(),
  };
}

export function emptyDay(): DayTotals {
  return {
    polls: 0,
    valid: 0,
    n: 0,
    hits: 0,
    overpays: 0,
    histograms: eachHistogram(() => denseHistogram()),
    top: eachHistogram(() => 0),
    tipHeights: new Map(),
    windows: undefined,
  };
}

export function bumpCount(map: Map<number, number>, key: number, delta: number): void {
  const count = (map.get(key) ?? 0) + delta;
  if (count === 0) map.delete(key);
  else map.set(key, count);
}

/** Adds (`sign` 1) or removes (−1) a whole hour bucket from its day's totals. */
export function addBucketToDay(day: DayTotals, bucket: ScoreBucket, sign: 1 | -1): void {
  day.polls += sign * bucket.polls;
  day.valid += sign * bucket.valid;
  day.n += sign * bucket.n;
  day.hits += sign * bucket.hits;
  day.overpays += sign * bucket.overpays;
  for (const name of HISTOGRAMS) {
    addSparse(day.histograms[name], bucket.histograms[name], sign);
    for (const bin of bucket.histograms[name].keys()) day.top[name] = Math.max(day.top[name], bin);
  }
  for (const [height, count] of bucket.tipHeights) bumpCount(day.tipHeights, height, sign * count);
  day.windows = undefined;
}

/** A sparse histogram as two arrays: adding it is a tight loop, not a Map iteration. */
export interface PackedHistogram {
  bins: Int32Array;
  counts: Float64Array;
}

function pack(histogram: SparseHistogram): PackedHistogram {
  const bins = new Int32Array(histogram.size);
  const counts = new Float64Array(histogram.size);
  let i = 0;
  for (const [bin, count] of histogram) {
    bins[i] = bin;
    counts[i] = count;
    i += 1;
  }
  return { bins, counts };
}

/** The bucket's histograms, packed once per change. */
export function packedOf(bucket: ScoreBucket): Record<HistogramName, PackedHistogram> {
  bucket.packed ??= eachHistogram((name) => pack(bucket.histograms[name]));
  return bucket.packed;
}

export function addPacked(target: DenseHistogram, packed: PackedHistogram): void {
  const { bins, counts } = packed;
  for (let i = 0; i < bins.length; i += 1) target[bins[i]!] = target[bins[i]!]! + counts[i]!;
}

export function toStored(bucket: ScoreBucket): StoredScoreBucket {
  return {
    source: bucket.source,
    target: bucket.target,
    hour: bucket.hour,
    polls: bucket.polls,
    valid: bucket.valid,
    n: bucket.n,
    hits: bucket.hits,
    overpays: bucket.overpays,
    ...eachStored((name) => histogramToJson(bucket.histograms[name])),
    tip_heights: [...bucket.tipHeights].sort((a, b) => a[0] - b[0]),
  };
}

function eachStored<T>(make: (name: HistogramName) => T) {
  return Object.fromEntries(HISTOGRAMS.map((name) => [STORED_NAMES[name], make(name)])) as Record<
    (typeof STORED_NAMES)[HistogramName],
    T
  >;
}

export function fromStored(stored: StoredScoreBucket): ScoreBucket {
  return {
    source: stored.source,
    target: stored.target,
    hour: stored.hour,
    polls: stored.polls,
    valid: stored.valid,
    n: stored.n,
    hits: stored.hits,
    overpays: stored.overpays,
    histograms: eachHistogram((name) => histogramFromJson(stored[STORED_NAMES[name]] ?? [])),
    tipHeights: new Map(stored.tip_heights),
  };
}
