import { BLOCK_VSIZE } from '../domain/constants';
import { FeeServiceError } from '../domain/errors';
import { roundRate3 } from '../domain/fee-math';
import { type FeeTiers, TIER_NAMES } from '../domain/types';
import { snapshotDigest } from './digest';
import type { FeeSnapshot, RecordedSnapshot } from './types';

/** Highest rate a snapshot may carry (`docs/fee-rules.md#snapshot-validation`). */
export const MAX_RATE_SAT_VB = 10_000;
/** Most projected blocks mempool.space reports (the 8th is the "stack"). */
export const MAX_PROJECTED_BLOCKS = 8;

/** A snapshot failed validation; `problems` lists every rule it broke. Never served. */
export class SnapshotValidationError extends FeeServiceError {
  constructor(readonly problems: string[]) {
    super('SNAPSHOT_INVALID', `invalid fee snapshot: ${problems.join('; ')}`, { retryable: true });
  }
}

const isRate = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * Checks every rule of `docs/fee-rules.md#snapshot-validation` and lists each broken one.
 * @returns an empty array when the snapshot is valid
 */
export function findSnapshotProblems(snapshot: FeeSnapshot): string[] {
  const problems: string[] = [];
  if (typeof snapshot.snapshot_schema !== 'string' || !snapshot.snapshot_schema.endsWith('-v1')) {
    problems.push('snapshot_schema must end in -v1');
  }
  if (typeof snapshot.source !== 'string' || snapshot.source.length === 0)
    problems.push('source is required');
  if (typeof snapshot.fetched_at !== 'string' || Number.isNaN(Date.parse(snapshot.fetched_at))) {
    problems.push('fetched_at must be an ISO 8601 time');
  }
  if (snapshot.tip_height !== null && !isCount(snapshot.tip_height)) {
    problems.push('tip_height must be an integer ≥ 0 or null');
  }
  const tiers = snapshot.tiers ?? ({} as FeeTiers);
  for (const name of TIER_NAMES) {
    const rate = tiers[name];
    if (!isRate(rate)) problems.push(`tiers.${name} must be a finite rate ≥ 0`);
    else if (rate > MAX_RATE_SAT_VB)
      problems.push(`tiers.${name} ${rate} is above ${MAX_RATE_SAT_VB} sat/vB`);
  }
  for (let i = 1; i < TIER_NAMES.length; i += 1) {
    const longer = TIER_NAMES[i]!;
    const shorter = TIER_NAMES[i - 1]!;
    if (isRate(tiers[shorter]) && isRate(tiers[longer]) && tiers[shorter] < tiers[longer]) {
      problems.push(`tiers must be ordered: ${shorter} ${tiers[shorter]} < ${longer} ${tiers[longer]}`);
    }
  }
  const mempool = snapshot.mempool;
  if (!mempool || !isCount(mempool.count)) problems.push('mempool.count must be an integer ≥ 0');
  if (!mempool || !isCount(mempool.vsize)) problems.push('mempool.vsize must be an integer ≥ 0');
  if (
    mempool &&
    isCount(mempool.count) &&
    isCount(mempool.vsize) &&
    (mempool.count === 0) !== (mempool.vsize === 0)
  ) {
    problems.push(
      `mempool.count is 0 exactly when vsize is 0 (count ${mempool.count}, vsize ${mempool.vsize})`,
    );
  }
  if (mempool && mempool.total_fee !== undefined && !isRate(mempool.total_fee)) {
    problems.push('mempool.total_fee must be ≥ 0 when present');
  }
  const blocks = snapshot.projected_blocks;
  if (!Array.isArray(blocks)) {
    problems.push('projected_blocks must be an array');
  } else {
    if (blocks.length > MAX_PROJECTED_BLOCKS) {
      problems.push(`projected_blocks holds ${blocks.length} blocks, at most ${MAX_PROJECTED_BLOCKS}`);
    }
    blocks.forEach((block, index) => {
      const last = index === blocks.length - 1;
      if (!isCount(block.block_vsize) || block.block_vsize === 0) {
        problems.push(`projected_blocks[${index}].block_vsize must be > 0`);
      } else if (!last && block.block_vsize > BLOCK_VSIZE) {
        problems.push(`projected_blocks[${index}].block_vsize ${block.block_vsize} exceeds ${BLOCK_VSIZE}`);
      }
      if (!isCount(block.n_tx) || block.n_tx < 1)
        problems.push(`projected_blocks[${index}].n_tx must be ≥ 1`);
      if (!isRate(block.median_fee) || block.median_fee > MAX_RATE_SAT_VB) {
        problems.push(`projected_blocks[${index}].median_fee must be a rate in 0..${MAX_RATE_SAT_VB}`);
      }
      // feeRange's top end is the block's single highest rate, where fat-finger payments above
      // 10,000 sat/vB really occur: only finiteness is required there.
      if (!Array.isArray(block.fee_range) || !block.fee_range.every(isRate)) {
        problems.push(`projected_blocks[${index}].fee_range must hold finite rates ≥ 0`);
      }
      if (!isRate(block.total_fees)) problems.push(`projected_blocks[${index}].total_fees must be ≥ 0`);
    });
  }
  if (typeof snapshot.repaired !== 'boolean') problems.push('repaired must be a boolean');
  return problems;
}

/**
 * Validates a snapshot and attaches its digest.
 * @throws SnapshotValidationError listing every broken rule
 */
export function validateFeeSnapshot(snapshot: FeeSnapshot): RecordedSnapshot {
  const problems = findSnapshotProblems(snapshot);
  if (problems.length > 0) throw new SnapshotValidationError(problems);
  const clean: FeeSnapshot = {
    snapshot_schema: snapshot.snapshot_schema,
    source: snapshot.source,
    fetched_at: new Date(snapshot.fetched_at).toISOString(),
    tip_height: snapshot.tip_height,
    tiers: { ...snapshot.tiers },
    mempool: { ...snapshot.mempool },
    projected_blocks: snapshot.projected_blocks.map((block) => ({
      ...block,
      fee_range: [...block.fee_range],
    })),
    repaired: snapshot.repaired,
  };
  if (clean.mempool.total_fee === undefined) delete clean.mempool.total_fee;
  return { ...clean, snapshot_digest: snapshotDigest(clean) };
}

/**
 * Repairs non-monotonic tiers by a running minimum from the shortest to the longest horizon
 * (Esplora and Core can answer a 6-block rate above the 3-block one). Rates are rounded to three
 * decimals first.
 */
export function repairTierOrder(tiers: FeeTiers): { tiers: FeeTiers; repaired: boolean } {
  const out = {} as FeeTiers;
  let running = Number.POSITIVE_INFINITY;
  let repaired = false;
  for (const name of TIER_NAMES) {
    const rate = roundRate3(tiers[name]);
    if (rate > running) repaired = true;
    running = Math.min(running, rate);
    out[name] = running;
  }
  return { tiers: out, repaired };
}
