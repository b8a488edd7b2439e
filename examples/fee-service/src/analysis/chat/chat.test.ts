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
