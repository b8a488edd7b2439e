import { describe, expect, it } from 'vitest';
import type { Reading } from '../../shared/cached-reading';
import { buildFeeLandscape, histogramBands } from './build';
import type { LandscapeData } from './data';
import { nameEnvironment, trendOf } from './environment';
import { FeeLandscapeSchema } from './schema';

const tiers = (fastest: number, half_hour: number, hour: number, economy: number, minimum: number) => ({
  fastest,
  half_hour,
  hour,
  economy,
  minimum,
});

const data: LandscapeData = {
  tip_height: 910_000,
  urls: ['https://mempool.example', 'https://core.example'],
  sources: [
    {
      source: 'mempool.space',
      status: 'ok',
      tiers: tiers(13, 11, 9, 2, 1),
      targets: { '1': 13, '3': 11, '6': 9, '144': 2 },
      repaired: false,
      lowered_targets: {},
    },
    {
      source: 'core-economical',
      status: 'ok',
      tiers: tiers(17.5, 12, 8, 1.5, 1),
      targets: { '1': 17.5, '2': 17.5 },
      repaired: true,
      lowered_targets: { '2': 18 },
    },
    { source: 'core-conservative', status: 'unavailable', reason: 'timed out' },
  ],
  mempool: {
    count: 3000,
    vsize: 1_100_000,
    total_fee: 9_000_000,
    histogram: [
      [25, 300_000],
      [12, 200_000],
      [3.5, 500_000],
      [0.5, 100_000],
    ],
  },
  projected_blocks: [
    {
      block_size: 1_500_000,
      block_vsize: 997_000,
      n_tx: 2_700,
      total_fees: 8_900_000,
      median_fee: 5.2,
      fee_range: [3, 3.5, 4, 5.2, 9, 14, 300],
    },
    {
      block_size: 150_000,
      block_vsize: 103_000,
      n_tx: 300,
      total_fees: 100_000,
      median_fee: 0.9,
      fee_range: [0.5, 1, 1.1],
    },
  ],
  recent_blocks: [12, 11, 10, 8, 8, 8].map((median, i) => ({
    height: 910_000 - i,
    time: 1_786_000_000 - i * 600,
    tx_count: 3_000,
    total_fees: 10_000_000,
    fee_range: [1, 2, 4, median, 15, 20, 500],
  })),
};
const reading: Reading<LandscapeData> = {
  value: data,
  fetchedAtMs: Date.parse('2026-08-06T12:00:00Z'),
  digest: `sha256:${'a'.repeat(64)}`,
};

describe('buildFeeLandscape', () => {
  it('builds a body valid against its published schema, every source side by side', () => {
    const body = buildFeeLandscape(reading, { age_seconds: 4, stale: false });
    expect(FeeLandscapeSchema.safeParse(body).success).toBe(true);
    const fastest = body.data.tiers.find((t) => t.tier === 'fastest')!;
    expect(fastest).toMatchObject({
      target_blocks: 1,
      quotes: [
        { source: 'mempool.space', rate_sat_vb: 13 },
        { source: 'core-economical', rate_sat_vb: 17.5 },
      ],
      low_sat_vb: 13,
      high_sat_vb: 17.5,
      spread_sat_vb: 4.5,
      spread_percent: 25.7,
    });
    expect(body.data.tiers.find((t) => t.tier === 'minimum')!.target_blocks).toBeNull();
    expect(body.data.send_wait).toMatchObject({
      decision: 'wait',
      reason_codes: ['meaningful_fee_curve_savings'],
    });
    expect(body.data.costs[0]).toEqual({
      tier: 'fastest',
      rate_sat_vb: 13,
      fee_140_vbytes_sat: 1820,
      fee_1000_vbytes_sat: 13_000,
    });
    expect(body.data.projected_blocks[1]).toMatchObject({
      index: 1,
      min_fee_rate_sat_vb: 0.5,
      max_fee_rate_sat_vb: 1.1,
    });
    expect(body.data.recent_blocks[0]!.fee_rates_sat_vb).toEqual({
      min: 1,
      p10: 2,
      p25: 4,
      p50: 12,
      p75: 15,
      p90: 20,
      max: 500,
    });
    expect(body.meta).toMatchObject({ age_seconds: 4, stale: false, fetched_at: '2026-08-06T12:00:00.000Z' });
  });

  it('cuts the histogram into bands labelled by their buckets’ real bounds, counts adding up to the mempool count', () => {
    // each bucket runs from its rate up to the next higher bucket's; the top one to the highest rate
    const { bands } = histogramBands(data.mempool, 300);
    expect(bands.map((b) => [b.min_sat_vb, b.max_sat_vb, b.vsize])).toEqual([
      [25, 300, 300_000],
      [12, 25, 200_000],
      [3.5, 12, 500_000],
      [0.5, 3.5, 100_000],
    ]);
    expect(histogramBands(data.mempool).bands[0]).toMatchObject({ min_sat_vb: 25, max_sat_vb: null });
    expect(bands.reduce((sum, b) => sum + b.transaction_count, 0)).toBe(3000);
    expect(bands[2]!.transaction_count).toBe(1364);
  });

  it('groups buckets at the fee levels by their lowest rate, each band spanning its buckets', () => {
    const mempool = {
      count: 40,
      vsize: 400,
      total_fee: 0,
      histogram: [
        [2.2, 100],
        [3.9, 100],
        [2.8, 100],
        [1.1, 100],
      ] as [number, number][],
    };
    // unsorted input is read highest first; 2.8 and 2.2 share the 2–3 level: one band 2.2–3.9
    expect(histogramBands(mempool, 16.4).bands.map((b) => [b.min_sat_vb, b.max_sat_vb, b.vsize])).toEqual([
      [3.9, 16.4, 100],
      [2.2, 3.9, 200],
      [1.1, 2.2, 100],
    ]);
  });
});

describe('fee-environment-v1', () => {
  it.each([
    [{ fastest: 40, projectedBlockCount: 3, recentMedian: 10 }, 'spike'],
    [{ fastest: 55, projectedBlockCount: 2, recentMedian: 30 }, 'congested'],
    [{ fastest: 20, projectedBlockCount: 9, recentMedian: 15 }, 'congested'],
    [{ fastest: 2, projectedBlockCount: 1, recentMedian: 1.5 }, 'quiet'],
    [{ fastest: 8, projectedBlockCount: 3, recentMedian: 6 }, 'normal'],
    [{ fastest: 25, projectedBlockCount: 5, recentMedian: 20 }, 'busy'],
  ] as const)('names %o %s', (input, name) => {
    expect(nameEnvironment(input).name).toBe(name);
  });

  it('counts the backlog in words: 1 projected block, 2 projected blocks', () => {
    expect(nameEnvironment({ fastest: 25, projectedBlockCount: 1, recentMedian: 20 }).rule).toMatch(
      /, 1 projected block$/,
    );
    expect(nameEnvironment({ fastest: 25, projectedBlockCount: 5, recentMedian: 20 }).rule).toMatch(
      /, 5 projected blocks$/,
    );
  });

  it('names the trend from the last 3 blocks against the 3 before', () => {
    expect(trendOf([12, 11, 10, 8, 8, 8])).toMatchObject({ direction: 'rising', change_percent: 37.5 });
    expect(trendOf([5, 5, 5, 8, 8, 8])).toMatchObject({ direction: 'falling', change_percent: -37.5 });
    expect(trendOf([8, 8, 9, 8, 8, 8]).direction).toBe('steady');
  });
});
