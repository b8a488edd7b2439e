import type { Generated } from 'kysely';

/**
 * Tables of the observatory's history. Rates are integer milli-sat/vB, times integer ms since the
 * epoch (block `time` in seconds, as upstreams give it), booleans 0/1 — the same values on SQLite
 * and PostgreSQL.
 */

export interface BlocksTable {
  height: number;
  hash: string;
  /** Block timestamp, seconds. */
  time: number;
  tx_count: number;
  weight: number;
  total_fee: number;
  subsidy: number;
  min_rate: number;
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  max_rate: number;
  avg_fee_rate: number;
  /** Where the percentiles come from: `transactions`, `fee_range` or `getblockstats`. */
  stats_from: string;
  recorded_at: number;
  /** The relay minimum when the block was recorded, msat/vB (1000 for blocks recorded before it was). */
  relay_minimum: number;
}

export interface EstimatesTable {
  id: Generated<number>;
  source: string;
  target: number;
  rate: number;
  observed_at: number;
  tip_height: number;
  /** tip_height + target: the block whose arrival completes the window. */
  window_end: number;
  judged: number;
  hit: number | null;
  first_fit: number | null;
  overpay: number | null;
  overpayment_msat: number | null;
  overpayment_sats: number | null;
  /** The rate that would have made it, msat/vB (null before judged, and for judgments of the first rule). */
  entry_msat: number | null;
}

export interface ScoreHoursTable {
  source: string;
  target: number;
  hour: number;
  polls: number;
  valid: number;
  n: number;
  hits: number;
  overpays: number;
  /** JSON `[[bin, count], …]`. */
  overpayment_sats: string;
  overpayment_msat: string;
  /** JSON `[[bin, count], …]`: the misses' entry fees in sats at 140 vB. */
  miss_entry_sats: string;
  /** JSON `[[height, count], …]`. */
  tip_heights: string;
  /** Write sequence: followers read the buckets with a larger one. */
  seq: number;
}

export interface GapsTable {
  id: Generated<number>;
  /** A source name, or `*` for the recorder itself (not running). */
  source: string;
  started_at: number;
  /** Null while the gap is open. */
  ended_at: number | null;
  reason: string;
}

export interface LeaseTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface HistoryDatabase {
  observatory_blocks: BlocksTable;
  observatory_estimates: EstimatesTable;
  observatory_score_hours: ScoreHoursTable;
  observatory_gaps: GapsTable;
  observatory_lease: LeaseTable;
}
