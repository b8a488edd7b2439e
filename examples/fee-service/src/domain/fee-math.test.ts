import { describe, expect, it } from 'vitest';
import { deriveFeeFigures } from './derived';
import { btcPerKvbToSatPerVb, feeForVsize, potentialSavings, projectedBlockCount } from './fee-math';

describe('derived fee figures', () => {
  it('reports zero blocks and the tiers unchanged for an empty mempool', () => {
    const figures = deriveFeeFigures({
      tiers: { fastest: 1, half_hour: 1, hour: 1, economy: 1, minimum: 1 },
      mempool: { count: 0, vsize: 0 },
    });
    expect(figures.mempool).toEqual({ vsize: 0, transaction_count: 0, projected_block_count: 0 });
    expect(figures.potential_savings).toEqual({ sat_vb: 0, percent: 0, at_140_vbytes_sat: 0 });
  });

  it('reports 0 percent when fastest is 0', () => {
    expect(potentialSavings(0, 0)).toEqual({ sat_vb: 0, percent: 0, at_140_vbytes_sat: 0 });
  });

  it.each([
    [0, 0],
    // Not -0 (toBe compares with Object.is): a negative vsize counts no block, as an empty mempool.
    [-1, 0],
    // JSON.parse('-0') is -0, a whole number ≥ 0 that validation lets through: still 0 blocks.
    [-0, 0],
    [1, 1],
    [999_999, 1],
    [1_000_000, 1],
    [1_000_001, 2],
    [8_000_000, 8],
  ])('counts %i vB as %i projected blocks', (vsize, blocks) => {
    expect(projectedBlockCount(vsize)).toBe(blocks);
  });

  it('rounds the illustrative fee up to whole sats', () => {
    expect(feeForVsize(0.1, 141)).toBe(15);
    expect(feeForVsize(2.023, 140)).toBe(284);
    expect(feeForVsize(1, 140)).toBe(140);
    // 0.1 sat/vB is not a binary fraction: 0.1 × 140 as doubles is 14.000000000000002.
    expect(feeForVsize(0.1, 140)).toBe(14);
    expect(feeForVsize(0.001, 1)).toBe(1);
    expect(feeForVsize(0, 140)).toBe(0);
  });

  it('publishes the saving at 140 vB as the difference of the two fees each rounded up', () => {
    // 1.001 × 140 = 140.14 → 141 and 0.999 × 140 = 139.86 → 140: 1 sat, where rounding the
    // difference (0.28) would say 0 or 1 depending on the rule.
    expect(potentialSavings(1.001, 0.999).at_140_vbytes_sat).toBe(1);
    expect(potentialSavings(2.023, 0.2)).toEqual({ sat_vb: 1.823, percent: 90.1, at_140_vbytes_sat: 256 });
    expect(potentialSavings(1.002, 1.001).at_140_vbytes_sat).toBe(0);
  });

  it('rounds the percent half up to one decimal', () => {
    // 1/8 = 12.5 %, 1/16 = 6.25 % → 6.3
    expect(potentialSavings(8, 7).percent).toBe(12.5);
    expect(potentialSavings(16, 15).percent).toBe(6.3);
  });

  it.each([
    [0.00001, 1],
    [0.00002023, 2.023],
    [0.000001, 0.1],
    [0.00000001, 0.001],
    [0.00123456, 123.456],
  ])('converts %d BTC/kvB to %d sat/vB exactly', (btc, sat) => {
    expect(btcPerKvbToSatPerVb(btc)).toBe(sat);
  });
});
