import { entryRate, isFullBlock } from '../../domain/inclusion';
import type { HistoryStore, StoredBlock, StoredEstimate, StoredGap } from '../history/types';
import { HOUR_MS, hourOf, type RankedScoreRow, ScoreBook } from './score-book';

/**
 * The observatory's in-process query API: what the three paid resources sell, and what other
 * resources ask (the AI fee advice reads the hit rate of a source at a horizon). Scores come from
 * an in-memory score book that follows the history's buckets by write sequence, so a scoreboard
 * never rereads the recorded estimates.
 */

export const OBSERVATORY_LIMITS = {
  /** Scoreboard window, hours. */
  defaultHours: 168,
  maxHours: 720,
  /** block-stats page size. */
  defaultBlocks: 50,
  maxBlocks: 1000,
  /** estimates page size and default span. */
  defaultEstimates: 1000,
  maxEstimates: 10_000,
  defaultEstimatesSpanMs: 24 * HOUR_MS,
} as const;

/** A scoreboard over whole clock hours. */
export interface Scoreboard {
  window: { hours: number; from: string; to: string };
  rows: RankedScoreRow[];
  /** Targets present, ascending: each is ranked on its own. */
  horizons: number[];
  /** Set when `rows` is empty: why. */
  empty_reason?: string;
}

/** A block's statistics in sat/vB (the resource's shape). */
export interface BlockStatsRow {
  height: number;
  hash: string;
  time: string;
  tx_count: number;
  weight: number;
  total_fee: number;
  subsidy: number;
  min: number;
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  max: number;
  avg_fee_rate: number;
  stats_from: StoredBlock['stats_from'];
  /** The relay minimum when the block was recorded. */
  relay_minimum: number;
  /** Weight at least 3,960,000 WU (docs/fee-rules.md#would-have-been-included). */
  full: boolean;
  /** The lowest rate that would have been included: relay_minimum with room, else max(relay_minimum, p10). */
  entry_rate: number;
}

export interface EstimateRow {
  id: number;
  source: string;
  target: number;
  rate_sat_vb: number;
  observed_at: string;
  tip_height: number;
  status: StoredEstimate['status'];
  judgment: {
    hit: boolean;
    first_fit: number | null;
    overpay: boolean;
    overpayment_sat_vb: number;
    overpayment_sats_140: number;
    /** The rate that would have made it: the first fit's entry rate, or a miss's lowest in its window. */
    entry_rate_sat_vb: number;
  } | null;
}

export interface GapRow {
  source: string;
  from: string;
  to: string | null;
  reason: string;
}

export interface EstimatesPage {
  rows: EstimateRow[];
  /** The interval queried (RFC 3339). */
  since: string;
  until: string;
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: string | null;
  /** Spans of the queried interval in which a source (or the recorder, `*`) recorded nothing. */
  gaps: GapRow[];
}

/** Scores per step of a window: one value per step and (source, target), null without judgments. */
export interface ScoreTimeline {
  /** Start of each step, seconds since the epoch. */
  x: number[];
  stepHours: number;
  rows: {
    source: string;
    target: number;
    hit_rate: (number | null)[];
    median_overpayment_sats_140: (number | null)[];
  }[];
}

export interface Observatory {
  /** Reads the score buckets written since the last refresh. */
  refresh(): Promise<void>;
  /**
   * The scoreboard of the last `hours` clock hours (the current hour included). The last results
   * are kept until the scores change; `cache: false` computes it anew (the bench).
   */
  scoreboard(options?: { hours?: number; cache?: boolean }): Promise<Scoreboard>;
  /** Hit rate and median overpayment per `stepHours` over the last `hours` (charts). */
  timeline(options: { hours: number; stepHours: number }): Promise<ScoreTimeline>;
  /** Hit rate and evidence of one (source, target) over the window, or undefined without data. */
  hitRate(
    source: string,
    target: number,
    hours?: number,
  ): Promise<{ hit_rate: number; n: number } | undefined>;
  blockStats(options: { limit: number; before?: number }): Promise<BlockStatsRow[]>;
  estimates(options: {
    source?: string;
    target?: number;
    since?: number;
    until?: number;
    cursor?: { observedAt: number; id: number };
    limit: number;
  }): Promise<EstimatesPage>;
  /** How much chain the history holds (every answer's provenance). */
  status(): Promise<{ blocks: number; tip_height: number | undefined }>;
  /**
   * Every estimator the observatory scores and its targets, ascending: the configured ones and any
   * the history holds (sources scored before a configuration change). By source name.
   */
  series(): Promise<Map<string, number[]>>;
}

const iso = (ms: number) => new Date(ms).toISOString();
const satVb = (msat: number) => msat / 1000;

/** Encodes a keyset cursor (opaque to clients). */
export function encodeCursor(cursor: { observedAt: number; id: number }): string {
  return Buffer.from(`${cursor.observedAt}.${cursor.id}`).toString('base64url');
}

/** Decodes a cursor; undefined when it is not one this service issued. */
export function decodeCursor(text: string): { observedAt: number; id: number } | undefined {
  const match = /^(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!match || encodeCursor({ observedAt: Number(match[1]), id: Number(match[2]) }) !== text)
    return undefined;
  return { observedAt: Number(match[1]), id: Number(match[2]) };
}

function toBlockRow(block: StoredBlock): BlockStatsRow {
  return {
    height: block.height,
    hash: block.hash,
    time: iso(block.time * 1000),
    tx_count: block.tx_count,
    weight: block.weight,
    total_fee: block.total_fee,
    subsidy: block.subsidy,
    min: satVb(block.min),
    p10: satVb(block.p10),
    p25: satVb(block.p25),
    p50: satVb(block.p50),
    p75: satVb(block.p75),
    p90: satVb(block.p90),
    max: satVb(block.max),
    avg_fee_rate: satVb(block.avg_fee_rate),
    stats_from: block.stats_from,
    relay_minimum: satVb(block.relay_minimum),
    full: isFullBlock(block.weight),
    entry_rate: satVb(entryRate(block, block.relay_minimum)),
  };
}

function toEstimateRow(e: StoredEstimate): EstimateRow {
  return {
    id: e.id,
    source: e.source,
    target: e.target,
    rate_sat_vb: satVb(e.rate),
    observed_at: iso(e.observedAt),
    tip_height: e.tipHeight,
    status: e.status,
    judgment: e.judgment
      ? {
          hit: e.judgment.hit,
          first_fit: e.judgment.firstFit ?? null,
          overpay: e.judgment.overpay,
          overpayment_sat_vb: satVb(e.judgment.overpaymentMsat),
          overpayment_sats_140: e.judgment.overpaymentSats,
          entry_rate_sat_vb: satVb(e.judgment.entryMsat),
        }
      : null,
  };
}

const toGapRow = (gap: StoredGap): GapRow => ({
  source: gap.source,
  from: iso(gap.startedAt),
  to: gap.endedAt === undefined ? null : iso(gap.endedAt),
  reason: gap.reason,
});

/**
 * Creates the observatory over a history.
 * @param options.now clock of the windows (the simulator's while it runs). Default Date.now.
 * @param options.maxStalenessMs a follower rereads the buckets when its copy is older. Default 5,000.
 * @param options.sources the configured estimators (name and targets), known before their first poll.
 */
export function createObservatory(options: {
  history: HistoryStore;
  now?: () => number;
  maxStalenessMs?: number;
  sources?: readonly { name: string; targets: readonly number[] }[];
}): Observatory {
  const { history } = options;
  const now = options.now ?? Date.now;
  const maxStaleness = options.maxStalenessMs ?? 5_000;
  const book = new ScoreBook();
  let seq = -1;
  let refreshedAt = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | undefined;

  const refresh = () => {
    refreshing ??= (async () => {
      const started = performance.now();
      const next = await history.bucketsAfter(seq);
      book.load(next.buckets);
      seq = next.seq;
      refreshedAt = started;
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  };
  const fresh = async () => {
    if (performance.now() - refreshedAt > maxStaleness) await refresh();
  };

  const observatory: Observatory = {
    refresh,
    async scoreboard({ hours = OBSERVATORY_LIMITS.defaultHours, cache = true } = {}) {
      await fresh();
      const toHour = hourOf(now());
      const fromHour = toHour - hours + 1;
      const rows = book.scoreboard(fromHour, toHour, { cache });
      const board: Scoreboard = {
        window: { hours, from: iso(fromHour * HOUR_MS), to: iso((toHour + 1) * HOUR_MS) },
        rows,
        horizons: [...new Set(rows.map((r) => r.target))],
      };
      if (rows.length === 0) {
        board.empty_reason =
          seq < 0 || book.keys().length === 0
            ? 'nothing recorded yet: the recorder has not polled any source'
            : `no source was polled between ${board.window.from} and ${board.window.to}`;
      }
      return board;
    },
    async timeline({ hours, stepHours }) {
      await fresh();
      const toHour = hourOf(now());
      const steps = Math.max(1, Math.ceil(hours / stepHours));
      const firstHour = toHour - steps * stepHours + 1;
      const x: number[] = [];
      const rows = new Map<string, ScoreTimeline['rows'][number]>();
      for (let step = 0; step < steps; step += 1) {
        const from = firstHour + step * stepHours;
        x.push(from * 3600);
        for (const row of book.scoreboard(from, from + stepHours - 1)) {
          const key = `${row.target}\u0000${row.source}`;
          let line = rows.get(key);
          if (!line) {
            line = {
              source: row.source,
              target: row.target,
              hit_rate: Array(steps).fill(null),
              median_overpayment_sats_140: Array(steps).fill(null),
            };
            rows.set(key, line);
          }
          line.hit_rate[step] = row.hit_rate ?? null;
          line.median_overpayment_sats_140[step] = row.median_overpayment_sats_140 ?? null;
        }
      }
      const sorted = [...rows.values()].sort(
        (a, b) => a.target - b.target || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0),
      );
      return { x, stepHours, rows: sorted };
    },
    async hitRate(source, target, hours = OBSERVATORY_LIMITS.defaultHours) {
      const board = await observatory.scoreboard({ hours });
      const row = board.rows.find((r) => r.source === source && r.target === target);
      return row?.hit_rate === undefined ? undefined : { hit_rate: row.hit_rate, n: row.n };
    },
    async blockStats({ limit, before }) {
      return (await history.blocks({ limit, ...(before === undefined ? {} : { before }) })).map(toBlockRow);
    },
    async estimates(query) {
      // By default up to now inclusive: a frozen clock (the simulator's between advances) still
      // shows what was observed at its present.
      const until = query.until ?? now() + 1;
      const since = query.since ?? until - OBSERVATORY_LIMITS.defaultEstimatesSpanMs;
      const rows = await history.estimates({
        since,
        until,
        limit: query.limit + 1,
        ...(query.source === undefined ? {} : { source: query.source }),
        ...(query.target === undefined ? {} : { target: query.target }),
        ...(query.cursor ? { after: query.cursor } : {}),
      });
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      const gaps = (await history.gaps(since, until)).filter(
        (gap) => query.source === undefined || gap.source === query.source || gap.source === '*',
      );
      return {
        rows: page.map(toEstimateRow),
        since: iso(since),
        until: iso(until),
        next_cursor:
          rows.length > query.limit && last
            ? encodeCursor({ observedAt: last.observedAt, id: last.id })
            : null,
        gaps: gaps.map(toGapRow),
      };
    },
    async status() {
      const summary = await history.chainSummary();
      return { blocks: summary.blocks, tip_height: summary.tipHeight };
    },
    async series() {
      await fresh();
      const targets = new Map<string, Set<number>>();
      const add = (source: string, target: number) => {
        const set = targets.get(source) ?? new Set<number>();
        targets.set(source, set.add(target));
      };
      for (const source of options.sources ?? [])
        for (const target of source.targets) add(source.name, target);
      for (const { source, target } of book.keys()) add(source, target);
      return new Map(
        [...targets]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([source, set]) => [source, [...set].sort((a, b) => a - b)]),
      );
    },
  };
  return observatory;
}
