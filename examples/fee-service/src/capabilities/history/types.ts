/**
 * The observatory's history: blocks with their fee statistics, every recorded estimate with its
 * judgment, the hourly score buckets, and the gaps. One interface over SQLite (embedded default, a
 * file beside the ledger) and PostgreSQL (many instances, one recorder elected by a lease).
 * Rates are integer milli-sat/vB, times ms since the epoch.
 */

/** What a judgment needs of a block. */
export interface BlockPercentiles {
  height: number;
  /** Weight units: whether the block was full. */
  weight: number;
  /** 10th and 75th fee-rate percentile (by vsize), msat/vB. */
  p10: number;
  p75: number;
  /** The lowest rate the upstream's mempool accepted when the block was recorded, msat/vB. */
  relayMinimum: number;
}

/** The verdict on one estimate. */
export interface Judgment {
  hit: boolean;
  /** Height of the first block of the window that would have included q (hits only). */
  firstFit: number | undefined;
  /** q > p75 of the first fit. */
  overpay: boolean;
  /** max(0, q − entry rate of the first fit), msat/vB; 0 for a miss. */
  overpaymentMsat: number;
  /** ceil(140 q) − ceil(140 × entry rate of the first fit), sats, ≥ 0; 0 for a miss. */
  overpaymentSats: number;
  /**
   * The rate that would have made it, msat/vB: the first fit's entry rate for a hit, the lowest
   * entry rate of the window for a miss.
   */
  entryMsat: number;
}

/** A score bucket as stored (JSON-friendly): one (source, target, clock hour) of the score book. */
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
  miss_entry_sats: [number, number][];
  tip_heights: [number, number][];
}

/** A block's fee statistics, as recorded. */
export interface StoredBlock {
  height: number;
  hash: string;
  /** Block timestamp, seconds since the epoch. */
  time: number;
  tx_count: number;
  weight: number;
  /** Sats. */
  total_fee: number;
  subsidy: number;
  /** Fee-rate percentiles by vsize, msat/vB. */
  min: number;
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
  max: number;
  avg_fee_rate: number;
  /** `transactions` (computed from the block's transactions), `fee_range` or `getblockstats`. */
  stats_from: 'transactions' | 'fee_range' | 'getblockstats';
  /**
   * The relay minimum when the block was recorded: the lowest rate the chain upstream's mempool
   * accepted, msat/vB (docs/fee-rules.md#would-have-been-included).
   */
  relay_minimum: number;
}

/** A block as a chain upstream gives it; the recorder adds the relay minimum it read. */
export type ChainBlock = Omit<StoredBlock, 'relay_minimum'>;

/** An estimate as a source gave it. */
export interface NewEstimate {
  source: string;
  target: number;
  /** msat/vB. */
  rate: number;
  observedAt: number;
  tipHeight: number;
}

export interface StoredEstimate extends NewEstimate {
  id: number;
  /**
   * `pending` until the window's last block is recorded (and again after a reorg orphans one);
   * `unjudgeable` when a block of its window is missing from the history (before its first block).
   */
  status: 'pending' | 'judged' | 'unjudgeable';
  judgment: Judgment | undefined;
}

/** A page request over the recorded estimates, oldest first. */
export interface EstimateQuery {
  source?: string;
  target?: number;
  /** observed_at ≥ since (ms). */
  since: number;
  /** observed_at < until (ms). */
  until: number;
  /** Keyset cursor: strictly after this (observed_at, id). */
  after?: { observedAt: number; id: number };
  limit: number;
}

/** A span with no data: a source that failed, or the recorder not running (`source` `*`). */
export interface StoredGap {
  id: number;
  source: string;
  startedAt: number;
  /** Undefined while the gap is still open. */
  endedAt: number | undefined;
  reason: string;
}

/** What the recorder does inside one write transaction (fenced by its lease). */
export interface HistoryWriter {
  insertBlock(block: StoredBlock): Promise<void>;
  /** Deletes the blocks at `height` and above (orphaned by a reorg) and returns how many. */
  deleteBlocksFrom(height: number): Promise<number>;
  /** What the judgment needs of the recorded blocks `from … to`: weight, p10, p75, relay minimum. */
  percentiles(from: number, to: number): Promise<BlockPercentiles[]>;
  /** Records estimates; returns them with their ids, in order. */
  insertEstimates(estimates: readonly NewEstimate[]): Promise<StoredEstimate[]>;
  /** Estimates not judged yet whose window ends at or before `height` (ready to judge). */
  estimatesReadyAt(height: number): Promise<StoredEstimate[]>;
  /** Judged estimates whose window reaches `height` or beyond (a reorg from `height` re-opens them). */
  judgedReaching(height: number): Promise<StoredEstimate[]>;
  /** Saves judgments (undefined: back to pending, or `unjudgeable`). */
  setJudgments(
    updates: readonly { id: number; judgment: Judgment | undefined; unjudgeable?: boolean }[],
  ): Promise<void>;
  /** Upserts score buckets with a new write sequence. */
  putBuckets(buckets: readonly StoredScoreBucket[]): Promise<void>;
  /** Opens a gap for `source` unless one is open; returns whether it opened one. */
  openGap(source: string, at: number, reason: string): Promise<boolean>;
  /** Closes the open gap of `source`, if any. */
  closeGap(source: string, at: number): Promise<void>;
  /** Records a closed gap. */
  insertGap(gap: Omit<StoredGap, 'id'>): Promise<void>;
}

export interface HistoryStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Creates or upgrades the tables (idempotent; safe from several instances at once). */
  migrate(): Promise<void>;
  /**
   * Takes or renews the recorder lease for `holder` until `now + ttlMs`; false while another
   * holder's lease is unexpired.
   */
  acquireLease(holder: string, ttlMs: number, now?: number): Promise<boolean>;
  /** Gives the lease up (another instance may take it at once). */
  releaseLease(holder: string): Promise<void>;
  /**
   * Runs `work` in one transaction that first renews `holder`'s lease; if the lease was lost, the
   * transaction does nothing and {@link LeaseLostError} is thrown, so two recorders never both write.
   */
  write<T>(
    holder: string,
    ttlMs: number,
    work: (writer: HistoryWriter) => Promise<T>,
    now?: number,
  ): Promise<T>;

  /** The highest recorded block. */
  tip(): Promise<StoredBlock | undefined>;
  /** Hashes of the recorded blocks `from … to`, by height. */
  hashes(from: number, to: number): Promise<Map<number, string>>;
  /** Blocks newest first, below `before` when given. */
  blocks(options: { limit: number; before?: number }): Promise<StoredBlock[]>;
  /** One page of estimates, oldest first. */
  estimates(query: EstimateQuery): Promise<StoredEstimate[]>;
  /** Score buckets written after sequence `seq`, and the newest sequence. */
  bucketsAfter(seq: number): Promise<{ buckets: StoredScoreBucket[]; seq: number }>;
  /** Gaps overlapping `from … to` (open ones included). */
  gaps(from: number, to: number): Promise<StoredGap[]>;
  /** When `source` was last polled (an estimate or a gap), or undefined. */
  lastActivity(): Promise<number | undefined>;
  /** How many blocks are recorded and the highest (cheap: for every answer's provenance). */
  chainSummary(): Promise<{ blocks: number; tipHeight: number | undefined }>;
  /** Counts, for diagnostics and the bench. */
  counts(): Promise<{ blocks: number; estimates: number; buckets: number; gaps: number }>;
  /** Deletes what is older than `before` (ms): estimates, blocks, buckets, closed gaps. */
  prune(before: number): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by {@link HistoryStore.write} when the holder no longer holds the recorder lease. */
export class LeaseLostError extends Error {
  readonly code = 'lease_lost';
  constructor(holder: string) {
    super(`recorder ${holder} no longer holds the observatory lease; nothing was written`);
    this.name = 'LeaseLostError';
  }
}
