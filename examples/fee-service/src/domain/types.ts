/** Fee-rate tiers in sat/vB, ordered fastest ≥ half_hour ≥ hour ≥ economy ≥ minimum once validated. */
export interface FeeTiers {
  fastest: number;
  half_hour: number;
  hour: number;
  economy: number;
  minimum: number;
}

/** The five tier names, from the shortest to the longest horizon. */
export const TIER_NAMES = ['fastest', 'half_hour', 'hour', 'economy', 'minimum'] as const;
export type TierName = (typeof TIER_NAMES)[number];

/** Mempool size as the upstream reports it. */
export interface MempoolSummary {
  /** Number of unconfirmed transactions. */
  count: number;
  /** Sum of their virtual sizes, in vB. */
  vsize: number;
  /** Sum of their fees, in sats, when the upstream reports it. */
  total_fee?: number;
}

/** What the derived figures and the decision read from a validated snapshot. */
export interface FeeFiguresInput {
  tiers: FeeTiers;
  mempool: MempoolSummary;
}

/** The validated-snapshot fields the fee bodies publish (structurally a `RecordedSnapshot`). */
export interface PublishedSnapshot extends FeeFiguresInput {
  snapshot_schema: string;
  source: string;
  /** ISO 8601 time the upstream answered. */
  fetched_at: string;
  /** `sha256:` + 64 hex of the canonical snapshot. */
  snapshot_digest: string;
}

/** Evidence level of a decision: a fresh snapshot is recorded, a fallback one degraded. */
export type Evidence = 'recorded' | 'degraded';

/** A snapshot together with its freshness at response time (what the snapshot service returns). */
export interface SnapshotReading {
  snapshot: PublishedSnapshot;
  age_seconds: number;
  stale: boolean;
  evidence: Evidence;
}
