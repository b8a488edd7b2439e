import { describe, expect, it } from 'vitest';
import type { FeeMarket } from '../market';
import { btcToSats } from './amount';
import { adviseFee } from './analyze';
import { readContext } from './context-words';
import { adviceProse } from './prose';

const market: FeeMarket = {
  tiers: { fastest: 20, half_hour: 15, hour: 10, economy: 5, minimum: 1 },
  next_block_floor_sat_vb: 12.5,
  floor_source: 'projected_block',
  mempool_vsize: 3_000_000,
  mempool_count: 9_000,
  projected_block_count: 3,
  tip_height: 910_010,
};

describe('adviseFee', () => {
  it.each([
    { urgency: 'high' as const, horizon: 1, rate: 20, fee: 2_820, saving: 0 },
    { urgency: 'medium' as const, horizon: 6, rate: 10, fee: 1_410, saving: 1_410 },
    { urgency: 'low' as const, horizon: 144, rate: 5, fee: 705, saving: 2_115 },
  ])(
    'maps $urgency urgency to $horizon block(s) at $rate sat/vB (141 vB → $fee sats)',
    ({ urgency, horizon, rate, fee, saving }) => {
      const facts = adviseFee({ market, urgency });
      expect(facts).toMatchObject({
        horizon_blocks: horizon,
        recommended_fee_rate_sat_vb: rate,
        fee_sat: fee,
        next_block_fee_sat: 2_820,
        decision: 'send',
        urgency_from: 'parameter',
      });
      expect(facts.savings.vs_next_block_sat).toBe(saving);
    },
  );

  it('defaults to medium and says there is no observatory evidence', () => {
    const facts = adviseFee({ market });
    expect(facts).toMatchObject({ urgency: 'medium', urgency_from: 'default', horizon_blocks: 6 });
    expect(facts.confidence).toEqual({
      level: 'unknown',
      note: 'no observatory evidence for this horizon yet',
    });
    expect(adviceProse(facts)).toContain('no observatory evidence');
  });

  it('pays at least the next-block floor for one block', () => {
    const facts = adviseFee({ market: { ...market, next_block_floor_sat_vb: 25.5 }, urgency: 'high' });
    expect(facts.recommended_fee_rate_sat_vb).toBe(25.5);
    expect(facts.fee_sat).toBe(3_596); // ceil(25.5 × 141) = ceil(3,595.5)
  });

  it('lets context steer urgency and size, the parameter win, and lists unknown words', () => {
    const consolidation = adviseFee({ market, context: 'UTXO consolidation, taproot wallet' });
    expect(consolidation).toMatchObject({
      urgency: 'low',
      urgency_from: 'context',
      assumed_vsize: 154,
      size_profile: 'p2tr',
    });
    expect(consolidation.context).toEqual({
      recognised: ['utxo', 'consolidation', 'taproot'],
      unrecognised: ['wallet'],
    });
    expect(consolidation.warnings).toContain('context_words_ignored');
    expect(adviseFee({ market, urgency: 'high', context: 'consolidation' }).urgency).toBe('high');
    expect(readContext('urgent consolidation').urgency).toBe('high');
  });

  it('advises waiting at low urgency only when the rate is meaningfully above the recent floor', () => {
    // economy 5 vs recent floor 2: gap 3 sat/vB ≥ 2 and 60 % ≥ 25 % → wait; 705 − ceil(2 × 141) = 423.
    const wait = adviseFee({ market, urgency: 'low', recentFloorSatVb: 2 });
    expect(wait).toMatchObject({ decision: 'wait', recent_floor_sat_vb: 2 });
    expect(wait.savings.by_deferring_sat).toBe(423);
    expect(adviceProse(wait)).toContain('Consider waiting');
    // gap 1 sat/vB → send.
    expect(adviseFee({ market, urgency: 'low', recentFloorSatVb: 4 }).decision).toBe('send');
    // medium never defers.
    expect(adviseFee({ market, urgency: 'medium', recentFloorSatVb: 1 }).decision).toBe('send');
  });

  it('gives the fee as a share of the amount and warns above 1 %', () => {
    const small = adviseFee({ market, urgency: 'medium', amountSat: 100_000 });
    expect(small.amount).toEqual({ amount_sat: 100_000, fee_share_percent: 1.41 });
    expect(small.warnings).toEqual(['fee_above_1_percent_of_amount']);
    expect(adviseFee({ market, amountSat: 1_000_000 }).warnings).toEqual([]);
    expect(adviseFee({ market, amountSat: 1_000 }).warnings).toEqual(['fee_exceeds_amount']);
  });

  it('takes its confidence from the observatory hit rate', () => {
    const facts = adviseFee({
      market,
      urgency: 'medium',
      evidence: { source: 'mempool-space', target: 6, hit_rate: 0.93, n: 400, window_hours: 168 },
    });
    expect(facts.confidence).toMatchObject({ level: 'high', hit_rate: 0.93, n: 400 });
    // it says what was measured: inclusion within the horizon, not a confirmation
    expect(adviceProse(facts)).toContain(
      "mempool-space's quotes for this horizon would have been included within 6 blocks 93% of the time over 400 judged estimates",
    );
    expect(adviceProse(facts)).not.toMatch(/confirmed/);
  });

  it('never recommends a tier its evidence says would rarely have been included: it takes what recent blocks took', () => {
    // the sub-sat shape: the economy tier at the 0.1 sat/vB relay minimum, quotes included 0 % of the time
    const subSat: FeeMarket = {
      ...market,
      tiers: { fastest: 0.6, half_hour: 0.45, hour: 0.3, economy: 0.1, minimum: 0.1 },
      next_block_floor_sat_vb: 0.1,
    };
    const facts = adviseFee({
      market: subSat,
      urgency: 'low',
      recentFloorSatVb: 0.35,
      evidence: { source: 'mempool.space', target: 144, hit_rate: 0, n: 21, window_hours: 168 },
    });
    expect(facts).toMatchObject({
      recommended_fee_rate_sat_vb: 0.35,
      fee_sat: 50, // ceil(0.35 × 141)
      decision: 'send',
      warnings: ['tier_rarely_included'],
      confidence: { level: 'low', hit_rate: 0 },
    });
    expect(facts.reason).toContain('raised to what recent blocks would have included');
    expect(adviceProse(facts)).toContain('Caution: the economy tier');
    // with evidence that it does get in, the relay minimum is the advice
    const included = adviseFee({
      market: subSat,
      urgency: 'low',
      recentFloorSatVb: 0.1,
      evidence: { source: 'mempool.space', target: 144, hit_rate: 1, n: 21, window_hours: 168 },
    });
    expect(included).toMatchObject({ recommended_fee_rate_sat_vb: 0.1, warnings: [] });
  });
});

describe('btcToSats', () => {
  it.each([
    ['0.00012345', 12_345],
    ['2', 200_000_000],
    ['21000000', 2_100_000_000_000_000],
    ['0', null],
    ['0.000000001', null],
    ['-1', null],
    ['1e3', null],
    ['21000000.00000001', null],
  ])('%s → %s', (text, sats) => expect(btcToSats(text)).toBe(sats));
});
