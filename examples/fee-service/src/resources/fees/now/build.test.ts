import { describe, expect, it } from 'vitest';
import { LIMITATIONS } from '../../../domain/constants';
import type { SnapshotReading } from '../../../domain/types';
import { buildFeeDecision } from './build';
import { FeeDecisionSchema } from './schema';

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
const payment = {
  facilitator: 'tollbooth',
  network: 'eip155:8453',
  transaction_hash: `0x${'1f'.repeat(32)}`,
};

describe('fee body builders', () => {
  it('builds a decision without paid_resource, with schema version, evidence, payment and limitations', () => {
    const decision = buildFeeDecision({
      reading: buildReading({ stale: true, evidence: 'degraded' }),
      payment,
    });
    expect(FeeDecisionSchema.parse(decision)).toEqual(decision);
    expect(decision.data).not.toHaveProperty('paid_resource');
    expect(decision.data.decision).toBe('wait');
    expect(decision.meta.schema_version).toBe('2026-08-06');
    expect(decision.meta.evidence).toBe('degraded');
    expect(decision.meta.stale).toBe(true);
    expect(decision.meta.payment).toEqual({ amount: '0.001', currency: 'USDC', ...payment });
    expect(decision.limitations).toEqual([...LIMITATIONS]);
  });

  it('rejects a decision body that carries paid_resource or a bad digest', () => {
    const decision = buildFeeDecision({ reading: buildReading(), payment });
    const withPaid = { ...decision, data: { ...decision.data, paid_resource: {} } };
    expect(FeeDecisionSchema.safeParse(withPaid).success).toBe(false);
    const badDigest = { ...decision, meta: { ...decision.meta, snapshot_digest: 'sha256:xyz' } };
    expect(FeeDecisionSchema.safeParse(badDigest).success).toBe(false);
  });
});
