import { describe, expect, it } from 'vitest';
import { analyzeBlock, type BlockSummaryInput, subsidyAtHeight } from './analyze';
import { blockProse } from './prose';

const summary = (
  height: number,
  p50: number,
  overrides: Partial<BlockSummaryInput> = {},
): BlockSummaryInput => ({
  id: `${'0'.repeat(16)}${height.toString(16).padStart(48, 'a')}`,
  height,
  timestamp: 1_786_000_000 + (height - 910_000) * 600,
  tx_count: 3_000,
  size: 1_500_000,
  weight: 3_993_000,
  extras: {
    totalFees: 5_000_000,
    medianFee: p50,
    feeRange: [1, p50 / 2, p50 * 0.75, p50, p50 * 1.5, p50 * 2, p50 * 20],
    avgFeeRate: p50 * 1.2,
    pool: { id: 111, name: 'Foundry USA', slug: 'foundryusa' },
  },
  ...overrides,
});

describe('analyzeBlock', () => {
  it('halves the subsidy every 210,000 blocks', () => {
    expect(subsidyAtHeight(0)).toBe(5_000_000_000);
    expect(subsidyAtHeight(839_999)).toBe(625_000_000);
    expect(subsidyAtHeight(840_000)).toBe(312_500_000);
    expect(subsidyAtHeight(1_050_000)).toBe(156_250_000);
  });

  it('gives the block’s entry rate by the one rule: its p10 when full, the relay minimum when it had room', () => {
    // p50 12 → p10 6 (feeRange [1, 6, 9, 12, 18, 24, 240])
    const full = analyzeBlock({
      block: summary(910_010, 12),
      previous: [],
      tipHeight: 910_010,
      relayMinimum: 1,
    });
    expect(full.inclusion).toEqual({ full: true, relay_minimum_sat_vb: 1, entry_rate_sat_vb: 6 });
    expect(blockProse(full)).toContain(
      'It was full: its 10th-percentile rate, 6 sat/vB, stands for its lowest included rate',
    );
    // 83 % full: every rate meeting the relay minimum would have been included, not p10
    const room = analyzeBlock({
      block: summary(910_010, 12, { weight: 3_320_000 }),
      previous: [],
      tipHeight: 910_010,
      relayMinimum: 1,
    });
    expect(room.inclusion).toEqual({ full: false, relay_minimum_sat_vb: 1, entry_rate_sat_vb: 1 });
    expect(blockProse(room)).toContain(
      'It had room, so every rate meeting the relay minimum of 1 sat/vB would have been included.',
    );
  });

  it('computes fullness, reward, the recent comparison and the gap to the previous block (hand-checked)', () => {
    const block = summary(910_010, 12, { timestamp: summary(910_009, 0).timestamp + 754, weight: 3_998_000 });
    // Previous medians 4, 5, 6, 7 → median (nearest rank) 5; 12 is 140 % above → higher.
    const previous = [summary(910_009, 4), summary(910_008, 5), summary(910_007, 6), summary(910_006, 7)];
    const facts = analyzeBlock({
      block,
      previous,
      tipHeight: 910_012,
      txs: [
        { txid: 'a'.repeat(64), fee: 50_000, vsize: 10_000 },
        { txid: 'b'.repeat(64), fee: 30_000, vsize: 150 },
        { txid: 'c'.repeat(64), fee: 141, vsize: 141 },
      ],
    });
    expect(facts.block).toMatchObject({
      height: 910_010,
      pool: 'Foundry USA',
      fullness_percent: 100,
      confirmations: 3,
    });
    // 3,998,000 / 4,000,000 = 99.95 % → 100.0 at one decimal.
    expect(facts.fees).toEqual({
      total_fee_sat: 5_000_000,
      subsidy_sat: 312_500_000,
      reward_sat: 317_500_000,
      fee_share_of_reward_percent: 1.6, // 5,000,000 / 317,500,000 = 1.575 %
      avg_fee_rate_sat_vb: 14.4,
    });
    expect(facts.fee_rates_sat_vb).toEqual({ min: 1, p10: 6, p25: 9, p50: 12, p75: 18, p90: 24, max: 240 });
    expect(facts.recent).toEqual({
      blocks: 4,
      median_p50_sat_vb: 5,
      median_p10_sat_vb: 2.5,
      lower_median_count: 4,
      comparison: 'higher',
      median_total_fee_sat: 5_000_000,
    });
    expect(facts.time_since_previous_seconds).toBe(754);
    expect(facts.notable).toMatchObject({
      transactions_seen: 3,
      highest_fee: { txid: 'a'.repeat(64), fee_rate_sat_vb: 5 },
      highest_rate: { txid: 'b'.repeat(64), fee_rate_sat_vb: 200 },
      largest: { txid: 'a'.repeat(64) },
    });
    const prose = blockProse(facts);
    expect(prose).toContain('Block 910,010 was mined by Foundry USA');
    expect(prose).toContain('higher than the 4 blocks before it');
    expect(prose).toContain('12 minutes 34 s after the previous block');
  });

  it('reads in line within 25 % and says nothing it does not know', () => {
    const bare = summary(910_020, 5);
    delete bare.extras;
    const facts = analyzeBlock({ block: bare, previous: [], tipHeight: null });
    expect(facts.fee_rates_sat_vb).toBeNull();
    expect(facts.recent).toBeNull();
    expect(facts.notable).toBeNull();
    expect(facts.time_since_previous_seconds).toBeNull();
    const inLine = analyzeBlock({
      block: summary(910_030, 6),
      previous: [summary(910_029, 5)],
      tipHeight: 910_030,
    });
    expect(inLine.recent!.comparison).toBe('in_line');
    const lower = analyzeBlock({
      block: summary(910_030, 3),
      previous: [summary(910_029, 5)],
      tipHeight: 910_030,
    });
    expect(lower.recent!.comparison).toBe('lower');
  });
});
