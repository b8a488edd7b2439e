import { describe, expect, it } from 'vitest';
import type { SnapshotReading } from '../../../domain/types';
import { buildFeePreview } from './build';
import { FeePreviewSchema, feePreviewSchema } from './schema';

function buildReading(overrides: Partial<SnapshotReading> = {}): SnapshotReading {
  return {
    snapshot: {
      snapshot_schema: 'mempool-space-fees-v1',
      source: 'https://mempool.space',
      fetched_at: '2026-08-06T12:00:00.000Z',
      snapshot_digest: `sha256:${'ab'.repeat(32)}`,
      tiers: { fastest: 13, half_hour: 11, hour: 9, economy: 2, minimum: 1 },
      mempool: { count: 12_000, vsize: 3_000_000 },
    },
    age_seconds: 4,
    stale: false,
    evidence: 'recorded',
    ...overrides,
  };
}
describe('fee body builders', () => {
  it('builds a preview that its schema accepts and that advertises the paid decision', () => {
    const preview = buildFeePreview({ reading: buildReading(), network: 'eip155:8453' });
    expect(FeePreviewSchema.parse(preview)).toEqual(preview);
    expect(preview.data.paid_resource).toEqual({
      method: 'GET',
      path: '/api/v1/fees/now',
      price: '0.001 USDC',
      network: 'eip155:8453',
    });
    expect(preview.data.mempool).toEqual({
      vsize: 3_000_000,
      transaction_count: 12_000,
      projected_block_count: 3,
    });
    expect(preview.meta.algorithm_version).toBe('send-wait-v1');
    expect(preview.meta).not.toHaveProperty('evidence');
  });

  it('pins deployment constants as literals when given', () => {
    const FeePreview = feePreviewSchema({
      snapshotSchema: 'mempool-space-fees-v1',
      source: 'https://mempool.space',
    });
    const preview = buildFeePreview({ reading: buildReading(), network: 'eip155:8453' });
    expect(FeePreview.safeParse(preview).success).toBe(true);
    const other = { ...preview, meta: { ...preview.meta, source: 'https://example.org' } };
    expect(FeePreview.safeParse(other).success).toBe(false);
    expect(z4JsonSchemaHasDescriptions(FeePreview)).toBe(true);
  });
});

function z4JsonSchemaHasDescriptions(schema: typeof FeePreviewSchema): boolean {
  const json = JSON.stringify(schema.toJSONSchema());
  return json.includes('"description":"fastest − economy, sat/vB."');
}
