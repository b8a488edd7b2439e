import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  INVENTED_NUMBER,
  startTestModelServer,
  type TestModelServer,
} from '../../../test/support/model-server';
import { numbersIn, numbersOfFacts, ungroundedNumbers } from './grounding';
import { createLanguageModel, ModelFailure } from './model';
import { writeProse } from './prose';
import { runToolLoop } from './tool-loop';

const facts = {
  fee: { fee_sat: 3_060, fee_rate_sat_vb: 20.125 },
  transaction: { vsize: 153, txid: 'ab'.repeat(32) },
};
const deterministic = 'It pays 3,060 sats for 153 vB, 20.125 sat/vB.';

describe('grounding', () => {
  it('reads numbers as written, not digits inside names', () => {
    expect(numbersIn('P2WPKH and BIP125 at 12.5 sat/vB, 1,234 sats, 3 blocks.').map((n) => n.value)).toEqual([
      12.5, 1234, 3,
    ]);
  });

  it('accepts a fact rounded to the shown decimals and rejects anything else', () => {
    const allowed = numbersOfFacts(facts);
    expect(ungroundedNumbers('About 20.1 sat/vB, or 20, for 153 vB and 3,060 sats.', allowed)).toEqual([]);
    expect(ungroundedNumbers('It pays 21 sat/vB and 999 sats.', allowed)).toEqual(['21', '999']);
    // A txid's digits are not figures.
    expect(numbersOfFacts({ txid: '12'.repeat(32) }).size).toBe(0);
  });
});

describe('writeProse and runToolLoop against the test model server', () => {
  let server: TestModelServer;
  beforeAll(async () => {
    server = await startTestModelServer({ model: 'test-model' });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.setBehaviour('grounded');
    server.requests.length = 0;
  });
  const model = () =>
    createLanguageModel({
      baseUrl: server.baseUrl,
      model: 'test-model',
      apiKey: 'sk-test',
      timeoutMs: 1_500,
    });

  it('is deterministic with no model configured', async () => {
    const result = await writeProse({ model: undefined, subject: 'a transaction', facts, deterministic });
    expect(result).toEqual({ provider: 'deterministic', model: null, fallback: null, prose: deterministic });
  });

  it('uses grounded model prose, sending the facts, the model name and the key', async () => {
    const result = await writeProse({ model: model(), subject: 'a transaction', facts, deterministic });
    expect(result.provider).toBe('test-model');
    expect(result.fallback).toBeNull();
    expect(result.prose).toContain('from the test model');
    expect(result.prose).toContain('3,060');
    const request = server.requests[0]!;
    expect(request.authorization).toBe('Bearer sk-test');
    expect(request.body.model).toBe('test-model');
    expect(request.body.messages[1]!.content).toContain(JSON.stringify(facts));
  });

  it.each([
    ['server_error', 'upstream_error'],
    ['malformed', 'malformed_response'],
    ['empty', 'empty_response'],
    ['invent', 'ungrounded_numbers'],
    ['hang', 'timeout'],
  ] as const)(
    'falls back to the deterministic prose when the model answers %s (%s)',
    async (behaviour, reason) => {
      server.setBehaviour(behaviour);
      const result = await writeProse({ model: model(), subject: 'a transaction', facts, deterministic });
      expect(result).toMatchObject({
        provider: 'deterministic',
        model: 'test-model',
        prose: deterministic,
        fallback: { reason },
      });
      if (reason === 'ungrounded_numbers') expect(result.fallback!.ungrounded).toEqual([INVENTED_NUMBER]);
    },
  );

  it('cools down after a 429 for retry-after seconds and calls again afterwards', async () => {
    let clock = 1_000_000;
    const limited = createLanguageModel({ baseUrl: server.baseUrl, model: 'test-model', now: () => clock });
    server.retryAfterSeconds = 20;
    server.enqueue('rate_limit');
    const first = await writeProse({ model: limited, subject: 'x', facts, deterministic });
    expect(first.fallback).toMatchObject({ reason: 'rate_limited' });
    const during = await writeProse({ model: limited, subject: 'x', facts, deterministic });
    expect(during.fallback).toMatchObject({ reason: 'cooling_down' });
    expect(server.requests).toHaveLength(1);
    clock += 20_001;
    const after = await writeProse({ model: limited, subject: 'x', facts, deterministic });
    expect(after.provider).toBe('test-model');
    expect(server.requests).toHaveLength(2);
  });

  it('runs the tools the model asks for, then returns its prose', async () => {
    server.setBehaviour('tools');
    const executed: string[] = [];
    const result = await runToolLoop({
      model: model(),
      system: 'You are an analyst.',
      user: 'Check the preview and the next block please',
      tools: ['preview', 'next_block', 'landscape'].map((name) => ({
        name,
        description: name,
        parameters: { type: 'object', properties: {} },
      })),
      execute: async (name) => {
        executed.push(name);
        return { tool: name, fastest: 20 };
      },
      maxCalls: 5,
    });
    expect(executed).toEqual(['preview', 'next_block']);
    expect(result.calls.map((c) => c.name)).toEqual(['preview', 'next_block']);
    expect(result.content).toContain('20');
    expect(server.requests[1]!.body.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
  });

  it('stops running tools past the step budget', async () => {
    server.setBehaviour('tools');
    const result = await runToolLoop({
      model: model(),
      system: 's',
      user: 'preview and next block',
      tools: ['preview', 'next_block'].map((name) => ({
        name,
        description: name,
        parameters: { type: 'object', properties: {} },
      })),
      execute: async (name) => ({ name }),
      maxCalls: 1,
    });
    expect(result.calls).toHaveLength(1);
  });

  it('throws a ModelFailure the analyst can fall back on', async () => {
    server.setBehaviour('server_error');
    await expect(
      runToolLoop({
        model: model(),
        system: 's',
        user: 'u',
        tools: [],
        execute: async () => ({}),
        maxCalls: 1,
      }),
    ).rejects.toBeInstanceOf(ModelFailure);
  });
});
