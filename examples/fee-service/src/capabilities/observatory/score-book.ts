import type { Judgment, StoredScoreBucket } from '../history/types';
import { addDense, addToHistogram, binOf, denseHistogram, quantilesOf } from './histogram';
import {
  addBucketToDay,
  addPacked,
  bumpCount,
  type DayTotals,
  dayOf,
  emptyBucket,
  emptyDay,
  fromStored,
  HISTOGRAMS,
  type HistogramName,
  HOURS_PER_DAY,
  hourOf,
  packedOf,
  type ScoreBucket,
  toStored,
} from './score-buckets';
import { costOf, feeSatsAt, rankRows } from './scoring';

export { HOUR_MS, hourOf } from './score-buckets';

/**
 * The scores kept incrementally: per (source, target, clock hour of the estimate), counts and
 * histograms that a judgment adds to and a reorg takes back, and the same per clock day as dense
 * arrays (`score-buckets.ts`). A scoreboard adds the whole days of its window and at most 46 edge
 * hours per row: its cost depends on the window and the number of rows, never on how many
 * estimates the history holds.
 */

/** One scoreboard row (rates are shares in [0, 1]; undefined when nothing was judged). */
export interface ScoreRow {
  source: string;
  target: number;
  /** Judged estimates. */
  n: number;
  /** Distinct blocks in the union of the judged estimates' windows. */
  blocks: number;
  polls: number;
  hit_rate: number | undefined;
  miss_rate: number | undefined;
  within_rate: number | undefined;
  overpay_rate: number | undefined;
  median_overpayment_sat_vb: number | undefined;
  p90_overpayment_sat_vb: number | undefined;
  median_overpayment_sats_140: number | undefined;
  p90_overpayment_sats_140: number | undefined;
  /** Median over misses of the fee at 140 vB that would have been included within the target. */
  median_miss_entry_fee_sats_140: number | undefined;
  /** Share of polls that returned a valid value; undefined without polls. */
  availability: number | undefined;
  cost: number | undefined;
}

/** A row with its rank in its horizon; undefined when nothing of it was judged (not ranked). */
export type RankedScoreRow = ScoreRow & { rank: number | undefined };

const keyOf = (source: string, target: number) => `${target}\u0000${source}`;

/** One (source, target): its hour buckets and day totals. */
interface Row {
  source: string;
  target: number;
  hours: Map<number, ScoreBucket>;
  days: Map<number, DayTotals>;
}

/** Rounds a share to 4 decimals (a JSON-friendly figure, no float tails). */
const share = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 10_000;

/** The windows [h+1, h+target] of the given tip heights, merged into sorted disjoint intervals. */
export function windowIntervals(tipHeights: Iterable<number>, target: number): [number, number][] {
  return mergeIntervals([...tipHeights].map((h): [number, number] => [h + 1, h + target]));
}

/** Sorts and merges intervals [first, last] that overlap or touch. */
function mergeIntervals(intervals: [number, number][]): [number, number][] {
  intervals.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [first, last] of intervals) {
    const top = out.at(-1);
    if (top && first <= top[1] + 1) top[1] = Math.max(top[1], last);
    else out.push([first, last]);
  }
  return out;
}

const coveredBy = (intervals: readonly [number, number][]) =>
  intervals.reduce((sum, [first, last]) => sum + last - first + 1, 0);

/** Distinct heights covered by the windows [h+1, h+target] of the given tip heights. */
export function unionOfWindows(tipHeights: Iterable<number>, target: number): number {
  return coveredBy(windowIntervals(tipHeights, target));
}

/** Scratch arrays of one scoreboard row (reused: a scoreboard allocates no histogram). */
const scratch = Object.fromEntries(HISTOGRAMS.map((name) => [name, denseHistogram()])) as Record<
  HistogramName,
  Float64Array
>;

/**
 * The incremental score book. `changed()` lists the buckets touched since the last call, for the
 * history store; `load()` replaces buckets read back from it (other instances follow the recorder
 * that way). The last scoreboards are kept until the next change.
 */
export class ScoreBook {
  private readonly rows = new Map<string, Row>();
  private readonly dirty = new Set<ScoreBucket>();
  private readonly cache = new Map<string, RankedScoreRow[]>();

  private row(source: string, target: number): Row {
    const key = keyOf(source, target);
    let row = this.rows.get(key);
    if (!row) {
      row = { source, target, hours: new Map(), days: new Map() };
      this.rows.set(key, row);
    }
    return row;
  }

  private day(row: Row, hour: number): DayTotals {
    let day = row.days.get(dayOf(hour));
    if (!day) {
      day = emptyDay();
      row.days.set(dayOf(hour), day);
    }
    return day;
  }

  private bucket(source: string, target: number, hour: number): { bucket: ScoreBucket; day: DayTotals } {
    const row = this.row(source, target);
    let bucket = row.hours.get(hour);
    if (!bucket) {
      bucket = emptyBucket(source, target, hour);
      row.hours.set(hour, bucket);
    }
    bucket.packed = undefined;
    this.dirty.add(bucket);
    this.cache.clear();
    return { bucket, day: this.day(row, hour) };
  }

  /** Counts one poll of `source` for `target` at `observedAt`; `valid` when it returned a value. */
  addPoll(source: string, target: number, observedAt: number, valid: boolean): void {
    const { bucket, day } = this.bucket(source, target, hourOf(observedAt));
    bucket.polls += 1;
    day.polls += 1;
    if (valid) {
      bucket.valid += 1;
      day.valid += 1;
    }
  }

  /**
   * Adds (`sign` 1) or takes back (`sign` −1, a reorg orphaned a block of its window) the judgment
   * of an estimate observed at `observedAt` with tip height `tipHeight`.
   */
  applyJudgment(
    estimate: { source: string; target: number; observedAt: number; tipHeight: number },
    judgment: Judgment,
    sign: 1 | -1,
  ): void {
    const { bucket, day } = this.bucket(estimate.source, estimate.target, hourOf(estimate.observedAt));
    bucket.n += sign;
    day.n += sign;
    bumpCount(bucket.tipHeights, estimate.tipHeight, sign);
    bumpCount(day.tipHeights, estimate.tipHeight, sign);
    day.windows = undefined;
    const count = (name: HistogramName, value: number) => {
      addToHistogram(bucket.histograms[name], value, sign);
      const bin = binOf(value);
      day.histograms[name][bin] = day.histograms[name][bin]! + sign;
      day.top[name] = Math.max(day.top[name], bin);
    };
    if (!judgment.hit) {
      count('missEntrySats', feeSatsAt(judgment.entryMsat));
      return;
    }
    bucket.hits += sign;
    day.hits += sign;
    if (judgment.overpay) {
      bucket.overpays += sign;
      day.overpays += sign;
    }
    count('overpaymentSats', judgment.overpaymentSats);
    count('overpaymentMsat', judgment.overpaymentMsat);
  }

  /** Buckets changed since the previous call, as stored rows. */
  changed(): StoredScoreBucket[] {
    const out = [...this.dirty].map(toStored);
    this.dirty.clear();
    return out;
  }

  /** Replaces buckets with stored ones (a follower catching up with the recorder). */
  load(buckets: Iterable<StoredScoreBucket>): void {
    for (const stored of buckets) {
      const row = this.row(stored.source, stored.target);
      const day = this.day(row, stored.hour);
      const previous = row.hours.get(stored.hour);
      if (previous) addBucketToDay(day, previous, -1);
      const bucket = fromStored(stored);
      row.hours.set(stored.hour, bucket);
      addBucketToDay(day, bucket, 1);
    }
    this.cache.clear();
  }

  /** Drops every bucket before `hour` (retention). */
  dropBefore(hour: number): void {
    for (const row of this.rows.values()) {
      for (const bucket of row.hours.values()) {
        if (bucket.hour >= hour) continue;
        row.hours.delete(bucket.hour);
        const day = row.days.get(dayOf(bucket.hour));
        if (day) addBucketToDay(day, bucket, -1);
      }
      for (const day of row.days.keys()) if ((day + 1) * HOURS_PER_DAY <= hour) row.days.delete(day);
    }
    this.cache.clear();
  }

  /**
   * The rows of the hours `fromHour … toHour` (inclusive), ranked by cost within each target.
   * Rows with neither polls nor judgments in the window are left out.
   */
  scoreboard(fromHour: number, toHour: number, options: { cache?: boolean } = {}): RankedScoreRow[] {
    const key = `${fromHour}:${toHour}`;
    const cached = options.cache === false ? undefined : this.cache.get(key);
    if (cached) return cached;
    const rows: ScoreRow[] = [];
    for (const row of this.rows.values()) {
      const summary = summarise(row, fromHour, toHour);
      if (summary) rows.push(summary);
    }
    const ranked = rankRows(rows);
    if (this.cache.size >= 16) this.cache.clear();
    this.cache.set(key, ranked);
    return ranked;
  }

  /** Sources and targets the book has seen. */
  keys(): { source: string; target: number }[] {
    return [...this.rows.values()].map((row) => ({ source: row.source, target: row.target }));
  }
}

/** Totals of a window: whole days from the day totals, the edges from hour buckets. */
function summarise(row: Row, fromHour: number, toHour: number): ScoreRow | undefined {
  let polls = 0;
  let valid = 0;
  let n = 0;
  let hits = 0;
  let overpays = 0;
  for (const name of HISTOGRAMS) scratch[name].fill(0);
  const tipHeights: number[] = [];
  const windows: [number, number][] = [];
  const addHour = (hour: number) => {
    const bucket = row.hours.get(hour);
    if (!bucket) return;
    polls += bucket.polls;
    valid += bucket.valid;
    n += bucket.n;
    hits += bucket.hits;
    overpays += bucket.overpays;
    const packed = packedOf(bucket);
    for (const name of HISTOGRAMS) addPacked(scratch[name], packed[name]);
    for (const height of bucket.tipHeights.keys()) tipHeights.push(height);
  };
  const firstDay = Math.ceil(fromHour / HOURS_PER_DAY);
  const lastDay = Math.floor((toHour + 1) / HOURS_PER_DAY) - 1;
  if (lastDay < firstDay) {
    for (let hour = fromHour; hour <= toHour; hour += 1) addHour(hour);
  } else {
    for (let hour = fromHour; hour < firstDay * HOURS_PER_DAY; hour += 1) addHour(hour);
    for (let d = firstDay; d <= lastDay; d += 1) {
      const day = row.days.get(d);
      if (!day) continue;
      polls += day.polls;
      valid += day.valid;
      n += day.n;
      hits += day.hits;
      overpays += day.overpays;
      for (const name of HISTOGRAMS) addDense(scratch[name], day.histograms[name], day.top[name]);
      day.windows ??= windowIntervals(day.tipHeights.keys(), row.target);
      for (const window of day.windows) windows.push([window[0], window[1]]);
    }
    for (let hour = (lastDay + 1) * HOURS_PER_DAY; hour <= toHour; hour += 1) addHour(hour);
  }
  if (polls === 0 && n === 0) return undefined;
  // Every hit has one overpayment in each overpayment histogram; every miss one entry fee.
  const [medianSats, p90Sats] = quantilesOf(scratch.overpaymentSats, hits, [0.5, 0.9]);
  const [medianMsat, p90Msat] = quantilesOf(scratch.overpaymentMsat, hits, [0.5, 0.9]);
  const [medianMissFee] = quantilesOf(scratch.missEntrySats, n - hits, [0.5]);
  const missRate = n > 0 ? share(n - hits, n) : undefined;
  return {
    source: row.source,
    target: row.target,
    n,
    blocks: coveredBy(mergeIntervals([...windows, ...windowIntervals(tipHeights, row.target)])),
    polls,
    hit_rate: n > 0 ? share(hits, n) : undefined,
    miss_rate: missRate,
    within_rate: n > 0 ? share(hits - overpays, n) : undefined,
    overpay_rate: n > 0 ? share(overpays, n) : undefined,
    median_overpayment_sat_vb: medianMsat === undefined ? undefined : medianMsat / 1000,
    p90_overpayment_sat_vb: p90Msat === undefined ? undefined : p90Msat / 1000,
    median_overpayment_sats_140: medianSats,
    p90_overpayment_sats_140: p90Sats,
    median_miss_entry_fee_sats_140: medianMissFee,
    availability: polls > 0 ? share(valid, polls) : undefined,
    // No hit: no overpayment to count; no miss: no miss penalty.
    cost:
      missRate === undefined
        ? undefined
        : Math.round(
            costOf({
              medianOverpaymentSats: medianSats ?? 0,
              missRate: (n - hits) / n,
              medianMissEntryFeeSats: medianMissFee ?? 0,
            }) * 10,
          ) / 10,
  };
}
