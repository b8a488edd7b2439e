import { describe, expect, it } from 'vitest';
import type { Reading } from '../../shared/cached-reading';
import { buildNextBlock } from './build';
import type { NextBlockData } from './data';
import { NextBlockSchema } from './schema';

const NOW = Date.parse('2026-08-06T12:10:00Z');
const txid = (i: number) => i.toString(16).padStart(64, '0');

function reading(txs: NextBlockData extends { block: infer B } ? B : never): Reading<NextBlockData> {
  return {
    fetchedAtMs: NOW - 2_000,
    digest: `sha256:${'b'.repeat(64)}`,
    value: {
      basis: 'block_template',
      tip: { height: 910_000, hash: 'c'.repeat(64), time: Math.floor(NOW / 1000) - 420 },
      height: 910_001,
      block: txs,
      min_relay_fee: 1,
      estimators: [
        {
          source: 'mempool.space',
          status: 'ok',
          tiers: { fastest: 12, half_hour: 9, hour: 7, economy: 2, minimum: 1 },
          targets: {},
          repaired: false,
          lowered_targets: {},
        },
        {
          source: 'core-economical',
          status: 'ok',
          tiers: { fastest: 4, half_hour: 3, hour: 2, economy: 1, minimum: 1 },
          targets: {},
          repaired: false,
          lowered_targets: {},
        },
        { source: 'esplora', status: 'unavailable', reason: 'down' },
      ],
      urls: ['https://core.example'],
    },
  };
}

describe('buildNextBlock', () => {
  it('fills every field from a full template: entry at its 10th-percentile rate, each estimator judged against it', () => {
    // 4,000 transactions of 250 vB at rates 5..45 sat/vB: 1,000,000 vB, a full block.
    const txs = Array.from({ length: 4_000 }, (_, i) => ({
      txid: txid(i),
      vsize: 250,
      fee: 250 * (5 + (i % 41)),
    }));
    const body = buildNextBlock(
      reading({ kind: 'template', txs, weight: 4_000_000 }),
      { age_seconds: 2, stale: false },
      NOW,
    );
    expect(NextBlockSchema.safeParse(body).success).toBe(true);
    expect(body.data).toMatchObject({
      height: 910_001,
      transaction_count: 4_000,
      vsize: 1_000_000,
      block_full: true,
      // full: p10 by vsize (400 of 4,000 transactions at 5–8 sat/vB, the 400th at 9) stands for its lowest included rate
      entry_fee_rate_sat_vb: 9,
      tip: { age_seconds: 420 },
      expected: { expected_in_seconds: 600, probability_within: { '10_minutes': 0.6321 } },
    });
    expect(body.data.fees.subsidy_sat).toBe(312_500_000);
    expect(body.data.fees.total_sat).toBe(txs.reduce((s, t) => s + t.fee, 0));
    expect(body.data.fee_rates_sat_vb).toMatchObject({ min: 5, p50: 25, max: 45 });
    expect(body.data.top_transactions).toHaveLength(10);
    expect(body.data.top_transactions[0]!.fee_rate_sat_vb).toBe(45);
    expect(body.data.estimators).toEqual([
      {
        source: 'mempool.space',
        status: 'ok',
        fastest_sat_vb: 12,
        above_entry_sat_vb: 3,
        verdict: 'gets_in',
        overpay_at_140_vbytes_sat: 420,
      },
      {
        source: 'core-economical',
        status: 'ok',
        fastest_sat_vb: 4,
        above_entry_sat_vb: -5,
        verdict: 'misses',
        overpay_at_140_vbytes_sat: 0,
      },
      { source: 'esplora', status: 'unavailable', reason: 'down' },
    ]);
  });

  it('takes the minimum relay rate as the entry when the block has room', () => {
    const txs = [{ txid: txid(1), vsize: 200, fee: 2_000 }];
    const body = buildNextBlock(
      reading({ kind: 'template', txs, weight: 800 }),
      { age_seconds: 0, stale: false },
      NOW,
    );
    expect(body.data).toMatchObject({ block_full: false, entry_fee_rate_sat_vb: 1 });
    expect(body.data.entry_rule).toBe(
      'the block has room (0% of its weight limit): the relay minimum, 1 sat/vB',
    );
  });
});
