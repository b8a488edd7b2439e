import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, snapshotDigest } from './digest';
import type { FeeSnapshot } from './types';
import { repairTierOrder, SnapshotValidationError, validateFeeSnapshot } from './validate';

function buildSnapshot(overrides: Partial<FeeSnapshot> = {}): FeeSnapshot {
  return {
    snapshot_schema: 'mempool-space-fees-v1',
    source: 'https://mempool.space',
    fetched_at: '2026-08-06T12:00:00.000Z',
    tip_height: 910_000,
    tiers: { fastest: 13, half_hour: 11, hour: 9, economy: 2, minimum: 1 },
    mempool: { count: 9000, vsize: 3_000_000, total_fee: 12_345_678 },
    projected_blocks: [
      {
        block_size: 1_500_000,
        block_vsize: 997_000,
        n_tx: 3000,
        total_fees: 9_000_000,
        median_fee: 13.2,
        fee_range: [9, 10, 12, 13, 15, 20, 300],
      },
      {
        block_size: 1_500_000,
        block_vsize: 2_003_000,
        n_tx: 6000,
        total_fees: 3_000_000,
        median_fee: 3.1,
        fee_range: [1, 2, 3, 4, 5, 6, 8],
      },
    ],
    repaired: false,
    ...overrides,
  };
}

const block = (overrides: Partial<FeeSnapshot['projected_blocks'][number]>) => ({
  block_size: 1000,
  block_vsize: 900_000,
  n_tx: 10,
  total_fees: 1000,
  median_fee: 2,
  fee_range: [1, 2, 3],
  ...overrides,
});

describe('snapshot validation (docs/fee-rules.md#snapshot-validation)', () => {
  it('accepts a well-formed snapshot and attaches a sha256 digest', () => {
    const recorded = validateFeeSnapshot(buildSnapshot());
    expect(recorded.snapshot_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(recorded.tiers.fastest).toBe(13);
  });

  it('accepts sub-1 rates from the precise and Core sources', () => {
    const recorded = validateFeeSnapshot(
      buildSnapshot({ tiers: { fastest: 2.023, half_hour: 1.094, hour: 0.502, economy: 0.2, minimum: 0.1 } }),
    );
    expect(recorded.tiers.minimum).toBe(0.1);
  });

  it('accepts an 8th stack block above 1,000,000 vB and an empty mempool', () => {
    const eight = Array.from({ length: 7 }, () => block({ block_vsize: 1_000_000 }));
    eight.push(block({ block_vsize: 5_000_000 }));
    expect(() => validateFeeSnapshot(buildSnapshot({ projected_blocks: eight }))).not.toThrow();
    expect(() =>
      validateFeeSnapshot(buildSnapshot({ mempool: { count: 0, vsize: 0 }, projected_blocks: [] })),
    ).not.toThrow();
  });

  it.each<[string, Partial<FeeSnapshot>, RegExp]>([
    [
      'a negative rate',
      { tiers: { fastest: 5, half_hour: 4, hour: 3, economy: 2, minimum: -1 } },
      /minimum must be a finite rate/,
    ],
    [
      'a NaN rate',
      { tiers: { fastest: Number.NaN, half_hour: 4, hour: 3, economy: 2, minimum: 1 } },
      /fastest must be a finite rate/,
    ],
    [
      'an infinite rate',
      { tiers: { fastest: Number.POSITIVE_INFINITY, half_hour: 4, hour: 3, economy: 2, minimum: 1 } },
      /fastest must be a finite/,
    ],
    [
      'a rate above 10,000 sat/vB',
      { tiers: { fastest: 10_001, half_hour: 4, hour: 3, economy: 2, minimum: 1 } },
      /above 10000/,
    ],
    [
      'unordered tiers',
      { tiers: { fastest: 5, half_hour: 6, hour: 3, economy: 2, minimum: 1 } },
      /fastest 5 < half_hour 6/,
    ],
    ['a fractional count', { mempool: { count: 1.5, vsize: 100 } }, /count must be an integer/],
    ['a negative vsize', { mempool: { count: 1, vsize: -1 } }, /vsize must be an integer/],
    [
      'count 0 with vsize',
      { mempool: { count: 0, vsize: 500 }, projected_blocks: [] },
      /count is 0 exactly when vsize is 0/,
    ],
    [
      'vsize 0 with count',
      { mempool: { count: 3, vsize: 0 }, projected_blocks: [] },
      /count is 0 exactly when vsize is 0/,
    ],
    ['nine projected blocks', { projected_blocks: Array.from({ length: 9 }, () => block({})) }, /at most 8/],
    [
      'an empty projected block',
      { projected_blocks: [block({ block_vsize: 0 }), block({})] },
      /block_vsize must be > 0/,
    ],
    [
      'an oversized non-last block',
      { projected_blocks: [block({ block_vsize: 1_200_000 }), block({})] },
      /exceeds 1000000/,
    ],
    ['a block without transactions', { projected_blocks: [block({ n_tx: 0 })] }, /n_tx must be ≥ 1/],
    ['a schema label not ending in -v1', { snapshot_schema: 'mempool-space-fees-v2' }, /end in -v1/],
    ['a bad fetched_at', { fetched_at: 'yesterday' }, /fetched_at/],
  ])('rejects %s', (_name, overrides, message) => {
    expect(() => validateFeeSnapshot(buildSnapshot(overrides))).toThrow(message);
    try {
      validateFeeSnapshot(buildSnapshot(overrides));
    } catch (error) {
      expect(error).toBeInstanceOf(SnapshotValidationError);
      expect((error as SnapshotValidationError).code).toBe('SNAPSHOT_INVALID');
    }
  });

  it('lists every broken rule at once', () => {
    try {
      validateFeeSnapshot(
        buildSnapshot({
          tiers: { fastest: -1, half_hour: 4, hour: 3, economy: 2, minimum: 1 },
          mempool: { count: 0, vsize: 5 },
        }),
      );
      expect.unreachable();
    } catch (error) {
      expect((error as SnapshotValidationError).problems.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('repairs non-monotonic tiers by a running minimum and says so', () => {
    expect(repairTierOrder({ fastest: 10, half_hour: 12, hour: 8, economy: 9, minimum: 1 })).toEqual({
      tiers: { fastest: 10, half_hour: 10, hour: 8, economy: 8, minimum: 1 },
      repaired: true,
    });
    expect(repairTierOrder({ fastest: 3, half_hour: 2, hour: 2, economy: 1, minimum: 1 }).repaired).toBe(
      false,
    );
  });
});

describe('snapshot digest', () => {
  it('sorts keys recursively and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: 'é' } })).toBe(
      '{"a":{"c":"é","d":[1,{"x":1,"y":2}]},"b":1}',
    );
  });

  it('is the same across key order and across instances, and ignores fetched_at', () => {
    const a = buildSnapshot();
    const reordered = Object.fromEntries(Object.entries(a).reverse()) as unknown as FeeSnapshot;
    const b: FeeSnapshot = {
      repaired: a.repaired,
      projected_blocks: a.projected_blocks,
      mempool: { total_fee: 12_345_678, vsize: 3_000_000, count: 9000 },
      tiers: { minimum: 1, economy: 2, hour: 9, half_hour: 11, fastest: 13 },
      tip_height: 910_000,
      fetched_at: '2026-08-06T12:00:20.000Z',
      source: a.source,
      snapshot_schema: a.snapshot_schema,
    };
    expect(snapshotDigest(reordered)).toBe(snapshotDigest(a));
    expect(snapshotDigest(b)).toBe(snapshotDigest(a));
    expect(validateFeeSnapshot(b).snapshot_digest).toBe(validateFeeSnapshot(a).snapshot_digest);
  });

  it('changes when any figure changes', () => {
    const a = buildSnapshot();
    const b = buildSnapshot({ tiers: { ...a.tiers, economy: 3 } });
    const c = buildSnapshot({ mempool: { ...a.mempool, count: 9001 } });
    expect(snapshotDigest(b)).not.toBe(snapshotDigest(a));
    expect(snapshotDigest(c)).not.toBe(snapshotDigest(a));
  });

  it('matches a known value for a fixed snapshot', () => {
    const digest = snapshotDigest(buildSnapshot());
    const { fetched_at: _f, ...content } = buildSnapshot();
    expect(digest).toBe(`sha256:${createHash('sha256').update(canonicalJson(content)).digest('hex')}`);
  });
});
