import {
  addToHistogram,
  HistogramSum,
  histogramFromJson,
  histogramToJson,
  type SparseHistogram,
} from './histogram';
import { costOf, type Judgment, rankRows } from './scoring';

/**
 * The scores kept incrementally: per (source, target, clock hour of the estimate), counts and
 * histograms that a judgment adds to and a reorg takes back. A scoreboard over a window adds at
 * most `hours` buckets per row — its cost depends on the window and the number of rows, never on
 * how many estimates the history holds.
 */

export const HOUR_MS = 3_600_000;

/** The clock hour (hours since the epoch) of a time in ms. */
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS);
}

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
  /** Overpayments of the hits: sats at 140 vB, and msat/vB. */
  overpaymentSats: SparseHistogram;
  overpaymentMsat: SparseHistogram;
  /** Tip heights of the judged estimates (height → count): their windows are the evidence. */
  tipHeights: Map<number, number>;
}

/** A bucket as stored (JSON-friendly). */
export interface StoredScoreBucket {
  source: string;
  target: number;
  hour: number;
  polls: number;
  valid: number;
  n: number;
  hits: number;
  overpays: number;
  overpayment_sats: [number, number][];
  overpayment_msat: [number, number][];
  tip_heights: [number, number][];
}

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
  /** Share of polls that returned a valid value; undefined without polls. */
  availability: number | undefined;
  cost: number | undefined;
}

export type RankedScoreRow = ScoreRow & { rank: number };

const keyOf = (source: string, target: number) => `${target}\u0000${source}`;

function emptyBucket(source: string, target: number, hour: number): ScoreBucket {
  return {
    source,
    target,
    hour,
    polls: 0,
    valid: 0,
    n: 0,
    hits: 0,
    overpays: 0,
    overpaymentSats: new Map(),
    overpaymentMsat: new Map(),
    tipHeights: new Map(),
  };
}

/** Rounds a share to 4 decimals (a JSON-friendly figure, no float tails). */
const share = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 10_000;

/** Distinct heights covered by the windows [h+1, h+target] of the given tip heights. */
export function unionOfWindows(tipHeights: Iterable<number>, target: number): number {
  const sorted = [...new Set(tipHeights)].sort((a, b) => a - b);
  let covered = 0;
  let end = Number.NEGATIVE_INFINITY; // last height counted
  for (const h of sorted) {
    const first = Math.max(h + 1, end + 1);
    const last = h + target;
    if (last >= first) {
      covered += last - first + 1;
      end = last;
    }
  }
  return covered;
}

/**
 * The incremental score book. `changed()` lists the buckets touched since the last call, for the
 * history store; `load()` replaces buckets read back from it (other instances follow the recorder
 * that way).
 */
export class ScoreBook {
  /** (target, source) → hour → bucket. */
  private readonly rows = new Map<string, Map<number, ScoreBucket>>();
  private readonly dirty = new Set<ScoreBucket>();

  private bucket(source: string, target: number, hour: number): ScoreBucket {
    const key = keyOf(source, target);
    let hours = this.rows.get(key);
    if (!hours) {
      hours = new Map();
      this.rows.set(key, hours);
    }
    let bucket = hours.get(hour);
    if (!bucket) {
      bucket = emptyBucket(source, target, hour);
      hours.set(hour, bucket);
    }
    this.dirty.add(bucket);
    return bucket;
  }

  /** Counts one poll of `source` for `target` at `observedAtMs`; `valid` when it returned a value. */
  addPoll(source: string, target: number, observedAtMs: number, valid: boolean): void {
    const bucket = this.bucket(source, target, hourOf(observedAtMs));
    bucket.polls += 1;
    if (valid) bucket.valid += 1;
  }

  /**
   * Adds (`sign` 1) or takes back (`sign` −1, a reorg orphaned a block of its window) the judgment
   * of an estimate observed at `observedAtMs` with tip height `tipHeight`.
   */
  applyJudgment(
    estimate: { source: string; target: number; observedAt: number; tipHeight: number },
    judgment: Judgment,
    sign: 1 | -1,
  ): void {
    const bucket = this.bucket(estimate.source, estimate.target, hourOf(estimate.observedAt));
    bucket.n += sign;
    const heights = (bucket.tipHeights.get(estimate.tipHeight) ?? 0) + sign;
    if (heights === 0) bucket.tipHeights.delete(estimate.tipHeight);
    else bucket.tipHeights.set(estimate.tipHeight, heights);
    if (!judgment.hit) return;
    bucket.hits += sign;
    if (judgment.overpay) bucket.overpays += sign;
    addToHistogram(bucket.overpaymentSats, judgment.overpaymentSats, sign);
    addToHistogram(bucket.overpaymentMsat, judgment.overpaymentMsat, sign);
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
      const key = keyOf(stored.source, stored.target);
      let hours = this.rows.get(key);
      if (!hours) {
        hours = new Map();
        this.rows.set(key, hours);
      }
      hours.set(stored.hour, fromStored(stored));
    }
  }

  /** Drops every bucket before `hour` (retention). */
  dropBefore(hour: number): void {
    for (const hours of this.rows.values()) {
      for (const bucketHour of hours.keys()) if (bucketHour < hour) hours.delete(bucketHour);
    }
  }

  /**
   * The rows of the hours `fromHour … toHour` (inclusive), ranked by cost within each target.
   * Rows with neither polls nor judgments in the window are left out.
   */
  scoreboard(fromHour: number, toHour: number): RankedScoreRow[] {
    const rows: ScoreRow[] = [];
    for (const hours of this.rows.values()) {
      const row = summarise(hours, fromHour, toHour);
      if (row) rows.push(row);
    }
    return rankRows(rows);
  }

  /** Sources and targets the book has seen. */
  keys(): { source: string; target: number }[] {
    const out: { source: string; target: number }[] = [];
    for (const hours of this.rows.values()) {
      const first = hours.values().next().value;
      if (first) out.push({ source: first.source, target: first.target });
    }
    return out;
  }
}

function summarise(hours: Map<number, ScoreBucket>, fromHour: number, toHour: number): ScoreRow | undefined {
  let source: string | undefined;
  let target = 0;
  let polls = 0;
  let valid = 0;
  let n = 0;
  let hits = 0;
  let overpays = 0;
  const sats = new HistogramSum();
  const msat = new HistogramSum();
  const tipHeights: number[] = [];
  const visit = (bucket: ScoreBucket) => {
    source = bucket.source;
    target = bucket.target;
    polls += bucket.polls;
    valid += bucket.valid;
    n += bucket.n;
    hits += bucket.hits;
    overpays += bucket.overpays;
    sats.add(bucket.overpaymentSats);
    msat.add(bucket.overpaymentMsat);
    for (const height of bucket.tipHeights.keys()) tipHeights.push(height);
  };
  // Whichever is smaller: the window's hours or the row's buckets.
  if (toHour - fromHour + 1 <= hours.size) {
    for (let hour = fromHour; hour <= toHour; hour += 1) {
      const bucket = hours.get(hour);
      if (bucket) visit(bucket);
    }
  } else {
    for (const bucket of hours.values()) if (bucket.hour >= fromHour && bucket.hour <= toHour) visit(bucket);
  }
  if (source === undefined || (polls === 0 && n === 0)) return undefined;
  const [medianSats, p90Sats] = sats.quantiles([0.5, 0.9]);
  const [medianMsat, p90Msat] = msat.quantiles([0.5, 0.9]);
  const missRate = n > 0 ? share(n - hits, n) : undefined;
  return {
    source,
    target,
    n,
    blocks: unionOfWindows(tipHeights, target),
    polls,
    hit_rate: n > 0 ? share(hits, n) : undefined,
    miss_rate: missRate,
    within_rate: n > 0 ? share(hits - overpays, n) : undefined,
    overpay_rate: n > 0 ? share(overpays, n) : undefined,
    median_overpayment_sat_vb: medianMsat === undefined ? undefined : medianMsat / 1000,
    p90_overpayment_sat_vb: p90Msat === undefined ? undefined : p90Msat / 1000,
    median_overpayment_sats_140: medianSats,
    p90_overpayment_sats_140: p90Sats,
    availability: polls > 0 ? share(valid, polls) : undefined,
    // Every judged estimate missed: no overpayment to count, the whole miss penalty.
    cost: missRate === undefined ? undefined : Math.round(costOf(medianSats ?? 0, (n - hits) / n) * 10) / 10,
  };
}

function toStored(bucket: ScoreBucket): StoredScoreBucket {
  return {
    source: bucket.source,
    target: bucket.target,
    hour: bucket.hour,
    polls: bucket.polls,
    valid: bucket.valid,
    n: bucket.n,
    hits: bucket.hits,
    overpays: bucket.overpays,
    overpayment_sats: histogramToJson(bucket.overpaymentSats),
    overpayment_msat: histogramToJson(bucket.overpaymentMsat),
    tip_heights: [...bucket.tipHeights].sort((a, b) => a[0] - b[0]),
  };
}

function fromStored(stored: StoredScoreBucket): ScoreBucket {
  return {
    source: stored.source,
    target: stored.target,
    hour: stored.hour,
    polls: stored.polls,
    valid: stored.valid,
    n: stored.n,
    hits: stored.hits,
    overpays: stored.overpays,
    overpaymentSats: histogramFromJson(stored.overpayment_sats),
    overpaymentMsat: histogramFromJson(stored.overpayment_msat),
    tipHeights: new Map(stored.tip_heights),
  };
}
