import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestModelServer, type TestModelServer } from '../../../test/support/model-server';
import { createLanguageModel } from '../../capabilities/language-model';
import { answerAnalystQuestion } from './analyst';
import type { AnalystToolbox } from './run';

const toolbox: AnalystToolbox = {
  preview: async () => ({
    summary: 'Fastest 20 sat/vB, economy 5 sat/vB.',
    evidence: { fastest: 20, economy: 5 },
  }),
  decision: async () => ({
    summary: 'send-wait-v1 says wait.',
    evidence: { decision: 'wait', saving_sat_vb: 15 },
  }),
};

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

  it('lets the model choose the steps by tool calls and uses its grounded report', async () => {
    const answer = await answerAnalystQuestion({
      question: 'Look at the preview and the decision',
      toolbox,
      model: model(),
    });
    expect(answer.planned_by).toBe('model');
    expect(answer.provenance).toEqual({ provider: 'test-model', model: 'test-model', fallback: null });
    expect(answer.steps.map((s) => [s.step, s.why])).toEqual([
      ['preview', 'chosen by the model'],
      ['decision', 'chosen by the model'],
    ]);
    expect(answer.verdict).toMatchObject({ kind: 'report', conclusion: 'send-wait-v1 says wait.' });
    if (answer.verdict.kind === 'report') expect(answer.verdict.prose).toContain('from the test model');
    // Only the available steps are offered as tools.
    expect(server.requests[0]!.body.tools!.map((t) => t.function.name)).toEqual(['preview', 'decision']);
  });

  it.each([
    [['server_error'], 'upstream_error'],
    [['rate_limit'], 'rate_limited'],
    [['malformed'], 'malformed_response'],
    [['tools', 'invent'], 'ungrounded_numbers'],
    [['hang'], 'timeout'],
  ] as const)('falls back to the rule plan when the model answers %j', async (behaviours, reason) => {
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
    expect(answer.verdict).toMatchObject({ kind: 'report', conclusion: 'send-wait-v1 says wait.' });
    expect(answer.steps.every((s) => s.status === 'ok')).toBe(true);
  });
});
