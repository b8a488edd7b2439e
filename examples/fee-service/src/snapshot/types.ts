import type { FeeTiers, MempoolSummary } from '../domain/types';

/** One projected block of mempool.space's `/api/v1/fees/mempool-blocks`, in snake_case. */
export interface ProjectedBlock {
  block_size: number;
  block_vsize: number;
  n_tx: number;
  total_fees: number;
  median_fee: number;
  fee_range: number[];
}

/**
 * The normalised, upstream-independent fee snapshot. Its canonical JSON (without `fetched_at`)
 * is what `snapshot_digest` hashes.
 */
export interface FeeSnapshot {
  /** Upstream format label ending in `-v1`, e.g. `mempool-space-fees-v1`. */
  snapshot_schema: string;
  /** Upstream base URL (credentials removed). */
  source: string;
  /** ISO 8601 time the upstream answered. */
  fetched_at: string;
  /** Chain tip height when the snapshot was taken, null when the upstream did not say. */
  tip_height: number | null;
  tiers: FeeTiers;
  mempool: MempoolSummary;
  /** 0–8 projected blocks; empty when the upstream has none (Esplora, Core). */
  projected_blocks: ProjectedBlock[];
  /** True when non-monotonic tiers were repaired by a running minimum (Esplora, Core). */
  repaired: boolean;
}

/** A validated snapshot with its digest. */
export interface RecordedSnapshot extends FeeSnapshot {
  /** `sha256:` + 64 hex. */
  snapshot_digest: string;
}

/** Anything that can produce a fee snapshot: the three upstream clients implement it. */
export interface FeeSnapshotSource {
  readonly snapshotSchema: string;
  readonly source: string;
  /** Fetches and validates a snapshot. @throws FeeServiceError */
  fetchSnapshot(options?: { now?: () => number }): Promise<RecordedSnapshot>;
  /** Cheap tip-height probe used to notice new blocks while the fee endpoints fail. */
  fetchTipHeight?(): Promise<number>;
}
