/**
 * Snapshot format labels (`meta.snapshot_schema`), one per upstream dialect, each ending in `-v1`.
 * A label changes (to `-v2`) only when the normalised snapshot or its digest input changes.
 */

/** mempool.space REST (the default upstream): tiers, mempool, projected blocks, tip. */
export const SNAPSHOT_SCHEMA = 'mempool-space-fees-v1';
/** Esplora `/fee-estimates` mapped to tiers, `/mempool`, tip. */
export const ESPLORA_SNAPSHOT_SCHEMA = 'esplora-fee-estimates-v1';
/** Bitcoin Core `estimatesmartfee` mapped to tiers, `getmempoolinfo`, `getblockcount`. */
export const BITCOIN_CORE_SNAPSHOT_SCHEMA = 'bitcoin-core-estimatesmartfee-v1';

export const SNAPSHOT_SCHEMAS = {
  'mempool-space': SNAPSHOT_SCHEMA,
  esplora: ESPLORA_SNAPSHOT_SCHEMA,
  'bitcoin-core': BITCOIN_CORE_SNAPSHOT_SCHEMA,
} as const;
