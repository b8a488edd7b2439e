import { describe, expect, it } from 'vitest';
import { chanceOfBlocksWithin, formatMinutes, waitForBlocks } from './block-time';
import { bumpCosts, feeAt } from './bump';
import { ceil, dividedBy, fromRate, parseDecimal, shift, times, toGrouped, toPlain } from './decimal';
import { DUST_THRESHOLDS_SAT, estimateSize, TYPICAL_CHILD, TYPICAL_PAYMENT, vsizeOfWeight } from './sizes';

const d = (text: string) => parseDecimal(text)!;

describe('exact decimals', () => {
  it.each([
    ['2.5', 141, '352.5', 353n],
    ['0.1', 3, '0.3', 1n],
    ['1.001', 1000, '1001', 1001n],
    ['2.023', 140, '283.22', 284n],
    ['0.000000001', 1, '0.000000001', 1n],
  ])('multiplies %s by %i exactly (%s) and rounds the fee up to %s sats', (rate, vsize, exact, fee) => {
    expect(toPlain(times(d(rate), vsize))).toBe(exact);
    expect(ceil(times(d(rate), vsize))).toBe(fee);
    expect(feeAt(d(rate), vsize)).toBe(fee);
  });

  it('converts by shifting the decimal point, never through a float', () => {
    expect(toPlain(shift(d('2'), -5))).toBe('0.00002');
    expect(toPlain(shift(d('0.00012'), 5))).toBe('12');
    expect(toPlain(shift(d('1.5'), 3))).toBe('1500');
    expect(toPlain(shift(d('0.1'), -8))).toBe('0.000000001');
    expect(toPlain(dividedBy(d('2'), 4))).toBe('0.5');
    expect(toPlain(dividedBy(d('0.1'), 4))).toBe('0.025');
    expect(toGrouped(d('1234567.5'))).toBe('1,234,567.5');
    // 0.1 + 0.2-style float noise never appears: 0.3 sat/vB is 0.000003 BTC/kvB exactly.
    expect(toPlain(shift(d('0.3'), -5))).toBe('0.000003');
    expect(toPlain(fromRate(2.023))).toBe('2.023');
  });

  it('refuses what is not a plain decimal', () => {
    expect(parseDecimal('1e5')).toBeUndefined();
    expect(parseDecimal('-1')).toBeUndefined();
    expect(parseDecimal('1.0000000000001')).toBeUndefined();
    expect(parseDecimal('1.50')).toEqual({ units: 15n, scale: 1 });
  });
});

describe('sizes', () => {
  it.each([
    ['1 P2WPKH in, 2 P2WPKH out', TYPICAL_PAYMENT, 562, 141],
    ['1 P2WPKH in, 1 P2WPKH out', TYPICAL_CHILD, 438, 110],
    [
      '1 P2TR in, 2 P2TR out',
      { inputs: [{ type: 'p2tr', count: 1 }], outputs: [{ type: 'p2tr', count: 2 }] },
      616,
      154,
    ],
    [
      '1 P2PKH in, 2 P2PKH out',
      { inputs: [{ type: 'p2pkh', count: 1 }], outputs: [{ type: 'p2pkh', count: 2 }] },
      904,
      226,
    ],
    [
      '20 P2WPKH in, 1 out',
      { inputs: [{ type: 'p2wpkh', count: 20 }], outputs: [{ type: 'p2wpkh', count: 1 }] },
      5606,
      1402,
    ],
    // A legacy input in a SegWit transaction carries an empty witness: one more weight unit.
    [
      'P2PKH and P2WPKH in, 1 out',
      {
        inputs: [
          { type: 'p2pkh', count: 1 },
          { type: 'p2wpkh', count: 1 },
        ],
        outputs: [{ type: 'p2wpkh', count: 1 }],
      },
      42 + 593 + 272 + 124,
      258,
    ],
  ] as const)('estimates %s as %i WU, %i vB', (_, shape, weight, vsize) => {
    expect(estimateSize({ inputs: [...shape.inputs], outputs: [...shape.outputs] })).toEqual({
      weight,
      vsize,
    });
  });

  it('rounds vsize up from weight and knows the dust thresholds', () => {
    expect(vsizeOfWeight(561)).toBe(141);
    expect(vsizeOfWeight(564)).toBe(141);
    expect(vsizeOfWeight(565)).toBe(142);
    expect(DUST_THRESHOLDS_SAT).toEqual({ p2pkh: 546, p2sh: 540, p2wpkh: 294, p2wsh: 330, p2tr: 330 });
  });
});

describe('block times', () => {
  it('follows the Poisson law of one block per 10 minutes', () => {
    // 1 − e^−1, 1 − e^−3, and 1 − e^−6 (1 + 6 + 18 + 36 + 54 + 64.8) for six blocks in an hour.
    expect(chanceOfBlocksWithin(1, 10)).toBeCloseTo(0.632121, 6);
    expect(chanceOfBlocksWithin(1, 30)).toBeCloseTo(0.950213, 6);
    expect(chanceOfBlocksWithin(6, 60)).toBeCloseTo(0.55432, 6);
    expect(chanceOfBlocksWithin(0, 5)).toBe(1);
  });

  it('gives the mean, median and 90th percentile of a wait for n blocks', () => {
    // Median of the exponential: 10 ln 2 = 6.93 min; 90 %: 10 ln 10 = 23.03 min.
    expect(waitForBlocks(1)).toEqual({ blocks: 1, mean_minutes: 10, median_minutes: 7, p90_minutes: 23 });
    // Erlang(6): median 56.7 min, 90 % 92.8 min.
    expect(waitForBlocks(6)).toEqual({ blocks: 6, mean_minutes: 60, median_minutes: 57, p90_minutes: 93 });
    expect(waitForBlocks(5000)).toEqual({
      blocks: 5000,
      mean_minutes: 50_000,
      median_minutes: null,
      p90_minutes: null,
    });
  });

  it('says a duration as people do', () => {
    expect(formatMinutes(1)).toBe('1 minute');
    expect(formatMinutes(60)).toBe('1 hour');
    expect(formatMinutes(93)).toBe('1 hour 33 minutes');
    expect(formatMinutes(1439)).toBe('23 hours 59 minutes');
    expect(formatMinutes(2 * 1440 + 1430)).toBe('3 days');
    expect(formatMinutes(1_440_000)).toBe('1,000 days');
  });
});

describe('bump costs', () => {
  const relay = d('1');
  it('prices RBF on the transaction alone and CPFP on the package', () => {
    const costs = bumpCosts({
      stuck: { vsize: 141, fee_sat: 141n },
      target: d('20'),
      childVsize: 110,
      relayMinimum: relay,
    });
    expect(costs.rbf).toEqual({ new_fee_sat: 2820n, extra_sat: 2679n, bound_by: 'target_rate' });
    // 20 × 251 − 141
    expect(costs.cpfp).toEqual({
      child_vsize: 110,
      child_fee_sat: 4879n,
      package_rate_sat_vb: 20,
      bound_by: 'target_rate',
    });
    expect(costs.cheaper).toBe('rbf');
  });

  it('applies the replacement rule when the target is barely above the old rate', () => {
    // 1.5 × 200 = 300, but a replacement must pay 200 + 1 × 200 = 400.
    const costs = bumpCosts({
      stuck: { vsize: 200, fee_sat: 200n },
      target: d('1.5'),
      childVsize: 110,
      relayMinimum: relay,
    });
    expect(costs.rbf).toEqual({ new_fee_sat: 400n, extra_sat: 200n, bound_by: 'incremental_relay' });
    // ceil(1.5 × 310) − 200 = 265
    expect(costs.cpfp.child_fee_sat).toBe(265n);
    expect(costs.cheaper).toBe('rbf');
  });

  it('keeps the child at the relay minimum on its own size when the package rule asks less', () => {
    // 5 × 210 − 1,000 = 50 sats, under 1 sat/vB on the child's 110 vB.
    const costs = bumpCosts({
      stuck: { vsize: 100, fee_sat: 1000n },
      target: d('5'),
      childVsize: 110,
      relayMinimum: relay,
    });
    expect(costs.cpfp).toMatchObject({ child_fee_sat: 110n, bound_by: 'relay_minimum' });
  });
});
