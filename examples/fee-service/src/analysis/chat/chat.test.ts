import { describe, expect, it } from 'vitest';
import type { FeeMarket } from '../market';
import { answerQuestion } from './answer';
import { KNOWLEDGE_BASE } from './knowledge-base';
import { createKnowledgeIndex } from './retrieve';

const market: FeeMarket = {
  tiers: { fastest: 20, half_hour: 15, hour: 10, economy: 5, minimum: 1 },
  next_block_floor_sat_vb: 12.5,
  floor_source: 'projected_block',
  mempool_vsize: 3_000_000,
  mempool_count: 9_000,
  projected_block_count: 3,
  tip_height: 910_010,
};
const index = createKnowledgeIndex();

describe('the knowledge base', () => {
  it('has unique ids, and every entry cites at least one public source', () => {
    expect(new Set(KNOWLEDGE_BASE.map((e) => e.id)).size).toBe(KNOWLEDGE_BASE.length);
    for (const entry of KNOWLEDGE_BASE) {
      expect(entry.sources.length).toBeGreaterThan(0);
      for (const s of entry.sources) expect(s.url).toMatch(/^https:\/\//);
    }
  });
});

describe('answerQuestion', () => {
  it.each([
    ['How do I speed up a stuck transaction?', ['stuck-transaction', 'rbf', 'cpfp']],
    ['What is replace-by-fee?', ['rbf']],
    ['Why are fees so high today?', ['why-fees-high']],
    ['How big is the mempool?', ['mempool']],
    ['What does child pays for parent mean?', ['cpfp']],
    ['When is the next halving and what is the block subsidy?', ['subsidy']],
    ['What is a P2A anchor output?', ['anchors']],
    ['How many sats in a bitcoin?', ['sats']],
    ['Should I consolidate my UTXOs?', ['consolidation', 'utxo']],
  ])('answers “%s” from one of %j', (question, expected) => {
    const outcome = answerQuestion({ question, index, market });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(expected).toContain(outcome.facts.entries[0]!.id);
    expect(outcome.prose).toContain(`[${outcome.facts.entries[0]!.id}]`);
  });

  it('adds and cites the live figures the entries call for', () => {
    const outcome = answerQuestion({ question: 'Why are fees high right now?', index, market });
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.facts.live_figures).toContainEqual({
      name: 'fastest_fee_rate',
      value: 20,
      unit: 'sat/vB',
    });
    expect(outcome.facts.live_figures).toContainEqual({
      name: 'mempool_vsize',
      value: 3_000_000,
      unit: 'vB',
    });
    expect(outcome.prose).toContain('the fastest rate is 20 sat/vB');
    expect(outcome.prose).toContain('[live]');
  });

  it.each([
    'What is the weather in Paris?',
    'Best swimming pool nearby',
    'Write me a poem about love',
    'asdf qwerty',
  ])('refuses “%s” as outside the domain', (question) => {
    const outcome = answerQuestion({ question, index, market });
    expect(outcome).toEqual({ ok: false, reason: expect.stringContaining('not about Bitcoin') });
  });
});

describe('what the chat computes', () => {
  const computed = (question: string) => {
    const outcome = answerQuestion({ question, index, market });
    if (!outcome.ok) throw new Error(outcome.reason);
    return outcome;
  };
  const result = (question: string, name: string) =>
    computed(question)
      .facts.computed.flatMap((c) => c.results)
      .find((r) => r.name === name)?.value;

  it('answers the fee for a size and a rate, rounded up to whole sats, first and cited as computed', () => {
    const { prose, facts } = computed('What is the fee for 141 vB at 2.5 sat/vB?');
    expect(facts.computed).toHaveLength(1);
    expect(facts.computed[0]).toMatchObject({
      kind: 'fee_for_size',
      inputs: [
        { name: 'vsize', value: 141, unit: 'vB' },
        { name: 'fee_rate', value: 2.5, unit: 'sat/vB' },
      ],
      results: [{ name: 'fee', value: 353, unit: 'sats' }],
    });
    expect(prose).toMatch(
      /^The fee for 141 vB is 353 sats at 2\.5 sat\/vB \(2\.5 × 141 = 352\.5, rounded up to whole sats\)\. \[computed\]/,
    );
    expect(facts.entries.map((e) => [e.id, e.cited_for])).toEqual([['fee-rate', 'computation']]);
  });

  it.each([
    ['fee for 141 vbytes at 2.5', 'fee', 353],
    ['how much is 1,000 vB at 0.1 sats/vbyte', 'fee', 100],
    ['what do 250 vB cost at 12.345 sat/vB', 'fee', 3087],
    ['fee for weight 561 WU at 3 sat/vB', 'fee', 423],
    ['cost of a 1-in 2-out taproot transaction at 10 sat/vB', 'fee', 1540],
    ['cost to consolidate 20 utxos at 2 sat/vB', 'fee', 2804],
    ['fee to send 0.001 BTC at 10 sat/vB', 'fee_share_of_amount', 1.41],
    ['I paid 500 sats for 141 vB, what rate is that?', 'fee_rate', 3.546],
    ['convert 0.00012 BTC/kvB to sat/vB', 'sat_per_vb', 12],
    ['what is 3 sat/vB in BTC/kvB', 'btc_per_kvb', 0.00003],
    ['2,500 sat/kvB in sat/vB?', 'sat_per_vb', 2.5],
    ['vsize of weight 562', 'vsize', 141],
    ['how many sats is 0.015 BTC', 'sats', 1_500_000],
    ['what is the subsidy at block 1,049,999', 'subsidy', 312_500_000],
    ['what is the subsidy at block 1,050,000', 'subsidy', 156_250_000],
    ['how long do 6 blocks take?', 'p90_minutes', 93],
    ['chance of at least 1 block within 30 minutes', 'chance_at_least_1', 95],
  ])('computes “%s”: %s = %d', (question, name, value) => {
    expect(result(question, name)).toBe(value);
  });

  it('answers fees at the live tiers when no rate is given, and the next block from the market', () => {
    expect(result('How much does a 141 vB transaction cost?', 'fee_at_fastest')).toBe(2820);
    expect(result('How much does a 141 vB transaction cost?', 'fee_at_economy')).toBe(705);
    const next = computed('What fee rate do I need for the next block?');
    expect(next.facts.computed[0]!.kind).toBe('next_block_rate');
    // The floor 12.5 × 141 = 1,762.5 → 1,763; fastest 20 × 141.
    expect(next.facts.computed[0]!.results).toEqual([
      { name: 'fee_at_floor', value: 1763, unit: 'sats' },
      { name: 'fee_at_fastest', value: 2820, unit: 'sats' },
    ]);
  });

  it('compares RBF with CPFP when asked “RBF or CPFP?”, with both costs', () => {
    const { prose, facts } = computed('RBF or CPFP?');
    expect(facts.computed.map((c) => c.kind)).toEqual(['bump']);
    expect(facts.entries.map((e) => e.id)).toEqual(['rbf', 'cpfp']);
    // A typical 141 vB payment at the minimum tier (1 sat/vB) lifted to the fastest tier (20).
    expect(facts.computed[0]!.results).toEqual([
      { name: 'rbf_new_fee', value: 2820, unit: 'sats' },
      { name: 'rbf_extra', value: 2679, unit: 'sats' },
      { name: 'cpfp_child_fee', value: 4879, unit: 'sats' },
      { name: 'cpfp_package_rate', value: 20, unit: 'sat/vB' },
    ]);
    expect(prose).toContain('RBF replaces it with a version paying 2,820 sats, 2,679 sats more');
    expect(prose).toContain('CPFP spends one of its outputs in a 110 vB child paying 4,879 sats');
    expect(prose).toContain('RBF is cheaper by 2,200 sats');
  });

  it('takes the stuck transaction and the target from the question', () => {
    const bump = computed('my tx is 200 vB and paid 2 sat/vB: bump it to 15 sat/vB, rbf or cpfp?').facts
      .computed[0]!;
    expect(bump.inputs).toEqual([
      { name: 'vsize', value: 200, unit: 'vB' },
      { name: 'fee', value: 400, unit: 'sats' },
      { name: 'target_fee_rate', value: 15, unit: 'sat/vB' },
      { name: 'child_vsize', value: 110, unit: 'vB' },
    ]);
    expect(bump.results.find((r) => r.name === 'cpfp_child_fee')!.value).toBe(15 * 310 - 400);
  });

  it('says nothing needs bumping when the stated fee already meets the target', () => {
    const bump = computed('RBF or CPFP for 141 vB paying 30 sat/vB?').facts.computed[0]!;
    expect(bump.results).toEqual([]);
    expect(bump.text).toMatch(/^It already pays 30 sat\/vB, at or above 20 sat\/vB: no bump is needed/);
  });

  it('reads each number once, in its own unit', () => {
    const { facts } = computed('fee for 141 vB at 2.5 sat/vB');
    expect(facts.computed.map((c) => c.kind)).toEqual(['fee_for_size']);
    expect(facts.computed.flatMap((c) => c.inputs).some((f) => f.unit === 'sats')).toBe(false);
  });

  it('computes nothing for a question that asks for no figure', () => {
    expect(computed('What is replace-by-fee?').facts.computed).toEqual([]);
    expect(computed('Why are fees so high today?').facts.computed).toEqual([]);
  });

  it('reads a bare fraction beside estimatesmartfee as BTC/kvB, and says so', () => {
    const units = computed('estimatesmartfee returned 0.00012, what is that in sat/vB?').facts.computed[0]!;
    expect(units.text).toBe('0.00012 BTC/kvB = 12 sat/vB = 12,000 sat/kvB = 3 sat/WU.');
    expect(units.assumptions).toEqual([
      "0.00012 was read as BTC/kvB, the unit of Bitcoin Core's estimatesmartfee.",
    ]);
  });

  it('never rounds a chance up to a certainty, and counts halvings in words', () => {
    expect(computed('How many blocks in 2 hours?').facts.computed[0]!.text).toBe(
      'In 2 hours 12 blocks are expected; the chance of at least 1 block: over 99.9%.',
    );
    expect(computed('what is the block reward at height 210000').facts.computed[0]!.text).toMatch(
      /^Block 210,000 carries a subsidy of 25 BTC \(2,500,000,000 sats\): 50 BTC halved once\. The next halving is at block 420,000, 210,000 blocks away/,
    );
  });

  it('answers a computable question the knowledge base alone would not place in the domain', () => {
    expect(computed('convert 0.0002 btc/kvb').facts.computed[0]!.kind).toBe('rate_units');
  });

  it('writes plurals right: one block, one confirmation', () => {
    const one = { ...market, projected_block_count: 1 };
    const outcome = answerQuestion({ question: 'How big is the mempool?', index, market: one });
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.prose).toContain("3,000,000 vB or 1 block's worth");
    expect(outcome.prose).not.toMatch(/\b1 blocks\b/);
    expect(computed('how long for 1 confirmation?').facts.computed[0]!.text).toMatch(
      /^1 confirmation takes 10 minutes on average/,
    );
  });
});
