import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestModelServer, type TestModelServer } from '../../../test/support/model-server';
import { createLanguageModel } from '../../capabilities/language-model';
import { answerAnalystQuestion } from './analyst';
import type { AnalystToolbox } from './run';

const DECISION = {
  decision: 'wait' as const,
  fastest_sat_vb: 20,
  economy_sat_vb: 5,
  reason_codes: ['meaningful_fee_curve_savings'],
  savings_sat_vb: 15,
  savings_percent: 75,
  savings_at_140_vbytes_sat: 2100,
};
const toolbox: AnalystToolbox = {
  preview: async () => ({
    summary: 'Fastest 20 sat/vB, economy 5 sat/vB.',
    evidence: { fastest: 20, economy: 5 },
  }),
  decision: async () => ({
    summary: 'send-wait-v1 says wait.',
    evidence: { decision: 'wait', saving_sat_vb: 15, percent: 75, at_140_vbytes_sat: 2100 },
    findings: { decision: DECISION },
  }),
};
const CONCLUSION =
  "Wait if the payment can take hours: the economy tier (5 sat/vB, 705 sats for 141 vB) saves 15 sat/vB (75% of the fastest rate, 2,100 sats on 140 vB), past send-wait-v1's thresholds of 2 sat/vB and 25%.";

describe('answerAnalystQuestion with the test model server', () => {
  let server: TestModelServer;
  beforeAll(async () => {
    server = await startTestModelServer();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    server.setBehaviour('tools');
  });
  const model = () => createLanguageModel({ baseUrl: server.baseUrl, model: 'test-model', timeoutMs: 1_000 });

  it('gives the model the rule plan’s facts and conclusion, lets it add a step by tool call, and uses its grounded narrative', async () => {
    const answer = await answerAnalystQuestion({
      question: 'Look at the preview too: should I send now?',
      toolbox,
      model: model(),
    });
    expect(answer.planned_by).toBe('rules_and_model');
    expect(answer.provenance).toEqual({ provider: 'test-model', model: 'test-model', fallback: null });
    // The rules' five steps (those this deployment lacks reported unavailable), then the model's.
    expect(answer.steps.map((s) => [s.step, s.status, s.why])).toEqual([
      ['decision', 'ok', 'the question asks whether or when to send'],
      ['next_block', 'unavailable', 'the question asks whether or when to send'],
      ['fee_advice', 'unavailable', 'the question asks whether or when to send'],
      ['observatory', 'unavailable', 'the question asks whether or when to send'],
      ['landscape', 'unavailable', 'the question asks whether or when to send'],
      ['preview', 'ok', 'chosen by the model'],
    ]);
    // The conclusion is the one combined from the facts; the narrative is the model's.
    expect(answer.verdict).toMatchObject({ kind: 'report', conclusion: CONCLUSION });
    if (answer.verdict.kind === 'report') expect(answer.verdict.prose).toContain('from the test model');
    const first = server.requests[0]!.body;
    const user = first.messages.find((m) => m.role === 'user')!.content!;
    expect(user).toContain('QUESTION: Look at the preview too: should I send now?');
    expect(JSON.parse(/^FACTS: (.*)$/m.exec(user)![1]!)).toMatchObject({ conclusion: CONCLUSION });
    // Only the available steps are offered as tools, and only one call fits in the six steps.
    expect(first.tools!.map((t) => t.function.name)).toEqual(['preview', 'decision']);
  });

  it('offers no tools when the rule plan used the whole step budget, and keeps the rules as the planner', async () => {
    const answer = await answerAnalystQuestion({
      question: 'should I send now?',
      toolbox,
      model: model(),
      maxSteps: 5,
    });
    expect(answer.planned_by).toBe('rules');
    expect(answer.provenance.provider).toBe('test-model');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body.tools).toBeUndefined();
  });

  it.each([
    [['server_error'], 'upstream_error'],
    [['rate_limit'], 'rate_limited'],
    [['malformed'], 'malformed_response'],
    [['tools', 'invent'], 'ungrounded_numbers'],
    [['hang'], 'timeout'],
  ] as const)(
    'falls back to the deterministic report when the model answers %j',
    async (behaviours, reason) => {
      server.enqueue(...behaviours);
      const answer = await answerAnalystQuestion({
        question: 'fees: send now?',
        toolbox,
        model: model(),
        budgetMs: 3_000,
      });
      expect(answer.planned_by).toBe('rules');
      expect(answer.provenance).toMatchObject({
        provider: 'deterministic',
        model: 'test-model',
        fallback: { reason },
      });
      expect(answer.verdict).toMatchObject({ kind: 'report', conclusion: CONCLUSION });
      if (answer.verdict.kind === 'report')
        expect(answer.verdict.prose).toContain(`Conclusion: ${CONCLUSION}`);
      // The rules' steps only: a step the model asked for before failing is not reported.
      expect(answer.steps.map((s) => s.step)).toEqual([
        'decision',
        'next_block',
        'fee_advice',
        'observatory',
        'landscape',
      ]);
    },
  );
});
