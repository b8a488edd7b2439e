import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  createMemoryLedgerStore,
  createPaymentGate,
  encodeHeader,
  type TollboothGate,
} from '@tollbooth/core';
import {
  buildPayment,
  createScriptedFacilitator,
  createSimpleScheme,
  type ScriptedFacilitator,
  type SimpleScheme,
  TEST_PAY_TO,
  TEST_TX,
} from '@tollbooth/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool, PAYMENT_META_KEY, PRICE_META_KEY, toolRoutes } from './index';
import { createToolServer } from './server';

const ACCEPTS = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' };

let facilitator: ScriptedFacilitator;
let scheme: SimpleScheme;
let gate: TollboothGate;
let client: Client;
let runs: string[];
let behaviour: 'ok' | 'isError' | 'throw';

const quote = defineTool({
  name: 'quote',
  description: 'A fee quote for a confirmation target.',
  input: z.strictObject({ blocks: z.number().int().min(1).max(144) }),
  output: z.object({ blocks: z.number(), satPerVb: z.number() }),
  accepts: ACCEPTS,
  handler: ({ blocks }) => {
    runs.push(`quote ${blocks}`);
    if (behaviour === 'throw') throw new Error('the fee source went away');
    if (behaviour === 'isError') return { content: [{ type: 'text', text: 'no data' }], isError: true };
    return {
      content: [{ type: 'text', text: JSON.stringify({ blocks, satPerVb: 12 }) }],
      structuredContent: { blocks, satPerVb: 12 },
    };
  },
});
const other = defineTool({
  name: 'other',
  description: 'Another paid tool at the same price.',
  accepts: ACCEPTS,
  handler: () => ({ content: [{ type: 'text', text: 'other' }] }),
});
const preview = defineTool({
  name: 'preview',
  description: 'Free preview.',
  handler: () => ({ content: [{ type: 'text', text: 'free' }] }),
});
const tools = [quote, other, preview];

beforeEach(async () => {
  facilitator = createScriptedFacilitator();
  scheme = createSimpleScheme();
  runs = [];
  behaviour = 'ok';
  gate = createPaymentGate({
    routes: toolRoutes(tools),
    schemes: [scheme],
    facilitator,
    ledger: createMemoryLedgerStore(),
  });
  const server = createToolServer({ info: { name: 'test', version: '1.0.0' }, gate, tools });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: 'agent', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  // The strict path: the client validates structuredContent against each listed output schema.
  await client.listTools();
});

afterEach(async () => {
  await client.close();
  await gate.close();
});

const requirement = () => gate.routes.get('TOOL /quote')!.requirements[0]!;
const paymentFor = (tool = 'quote') => buildPayment(requirement(), { resource: `mcp://tool/${tool}` });

async function call(args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({
    name: 'quote',
    arguments: args,
    ...(meta ? { _meta: meta } : {}),
  })) as CallToolResult;
}

function challengeOf(result: CallToolResult): {
  error: string;
  accepts: unknown[];
  resource: { url: string };
} {
  expect(result.isError).toBe(true);
  const text = (result.content[0] as { text: string }).text;
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent as never;
}

describe('listing', () => {
  it('shows a paid tool with its price in the description and in _meta, and a widened output schema', async () => {
    const { tools: listed } = await client.listTools();
    const paid = listed.find((t) => t.name === 'quote')!;
    expect(paid.description).toBe(
      'A fee quote for a confirmation target. Costs 0.01 USDC on eip155:8453 per call, paid with x402 (_meta["x402/payment"]).',
    );
    expect(paid._meta?.[PRICE_META_KEY]).toEqual({ resource: 'mcp://tool/quote', accepts: [requirement()] });
    expect((paid.outputSchema as unknown as { anyOf: unknown[] }).anyOf).toHaveLength(3);
    const free = listed.find((t) => t.name === 'preview')!;
    expect(free.description).toBe('Free preview.');
    expect(free._meta).toBeUndefined();
  });
});

describe('an unpaid call', () => {
  it('answers the PaymentRequired in structuredContent and as JSON text, without running the tool', async () => {
    const challenge = challengeOf(await call({ blocks: 2 }));
    expect(challenge.error).toBe('payment_required');
    expect(challenge.resource.url).toBe('mcp://tool/quote');
    expect(challenge.accepts).toEqual([requirement()]);
    expect(runs).toEqual([]);
  });

  it('refuses invalid arguments before any challenge', async () => {
    const result = await call({ blocks: 0 }, { [PAYMENT_META_KEY]: paymentFor() });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect((result.content[0] as { text: string }).text).toMatch(
      /^Invalid arguments for tool quote: blocks:/,
    );
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
  });

  it('answers an unknown tool with the JSON-RPC error -32602', async () => {
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('runs a free tool without any payment', async () => {
    const result = (await client.callTool({ name: 'preview', arguments: {} })) as CallToolResult;
    expect(result).toEqual({ content: [{ type: 'text', text: 'free' }] });
  });
});

describe('a paid call', () => {
  it('runs the tool once, settles and puts the receipt in _meta["x402/payment-response"]', async () => {
    const result = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: paymentFor() });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ blocks: 3, satPerVb: 12 });
    expect(result._meta?.['x402/payment-response']).toMatchObject({ success: true, transaction: TEST_TX });
    expect(runs).toEqual(['quote 3']);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('answers the same payment retried with the stored result, byte for byte, without a second charge', async () => {
    const payment = paymentFor();
    const first = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: payment });
    const second = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: payment });
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(runs).toEqual(['quote 3']);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('runs the tool once and settles once for ten concurrent calls carrying one payment', async () => {
    facilitator.delayMs = 20;
    const payment = paymentFor();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call({ blocks: 6 }, { [PAYMENT_META_KEY]: payment })),
    );
    expect(runs).toEqual(['quote 6']);
    expect(facilitator.calls.settle).toBe(1);
    for (const result of results) expect(JSON.stringify(result)).toBe(JSON.stringify(results[0]));
    expect(results[0]!._meta?.['x402/payment-response']).toMatchObject({ success: true });
  });

  it.each(['isError', 'throw'] as const)(
    'never settles a tool that answers %s, and the payment stays usable',
    async (how) => {
      behaviour = how;
      const payment = paymentFor();
      const failed = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: payment });
      expect(failed.isError).toBe(true);
      expect(failed._meta).toBeUndefined();
      expect((failed.content[0] as { text: string }).text).toBe(
        how === 'throw' ? 'the fee source went away' : 'no data',
      );
      expect(facilitator.calls.settle).toBe(0);
      behaviour = 'ok';
      const paid = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: payment });
      expect(paid.structuredContent).toEqual({ blocks: 3, satPerVb: 12 });
      expect(facilitator.calls.settle).toBe(1);
    },
  );

  it('withholds the content of a refused settlement: the challenge with the reason and the failed receipt', async () => {
    facilitator.settleScript = 'failure';
    // The chain shows nothing moved, so the refusal stands (docs/ledger.md#a-refusal-is-judged-by-the-chain).
    scheme.reconcileAnswer = { status: 'unsettled' };
    const result = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: paymentFor() });
    const challenge = challengeOf(result);
    expect(challenge.error).toBe('payment_insufficient_funds');
    expect(JSON.stringify(result)).not.toContain('satPerVb');
    expect(result._meta?.['x402/payment-response']).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
    });
    expect(runs).toEqual(['quote 3']);
  });

  it('answers an unknown settlement outcome with settlement_uncertain and the retry instruction, never fresh accepts', async () => {
    facilitator.settleScript = 'pending';
    const payment = paymentFor();
    const result = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: payment });
    expect(result.isError).toBe(true);
    const body = result.structuredContent as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      code: 'settlement_uncertain',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
      transaction: TEST_TX,
    });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(body);
    expect(JSON.stringify(result)).not.toContain('accepts');

    // The facilitator answers again: the same payload is settled again and gets the stored result.
    facilitator.settleScript = 'success';
    scheme.reconcileAnswer = { status: 'unsettled' };
    const retried = await call({ blocks: 3 }, { [PAYMENT_META_KEY]: payment });
    expect(retried.structuredContent).toEqual({ blocks: 3, satPerVb: 12 });
    expect(retried._meta?.['x402/payment-response']).toMatchObject({ success: true });
    expect(runs).toEqual(['quote 3']);
  });
});

describe('a malformed payment in _meta', () => {
  it.each([
    ['a string', 'eyJ4NDAyVmVyc2lvbiI6Mn0=', 'payment_payload_invalid'],
    ['a number', 42, 'payment_payload_invalid'],
    ['an array', [1, 2], 'payment_payload_invalid'],
    ['null', null, 'payment_payload_invalid'],
    ['of another version', { x402Version: 3, payload: {} }, 'payment_payload_invalid'],
    [
      'a v1 payment under the v2 key',
      { x402Version: 1, scheme: 'exact', network: 'base', payload: {} },
      'payment_version_mismatch',
    ],
    ['oversized', { x402Version: 2, payload: { padding: 'x'.repeat(20_000) } }, 'payment_header_too_large'],
  ])(
    'answers %s with the challenge and its reason, never a JSON-RPC error nor a charge',
    async (_name, value, code) => {
      const challenge = challengeOf(await call({ blocks: 3 }, { [PAYMENT_META_KEY]: value }));
      expect(challenge.error).toBe(code);
      expect(runs).toEqual([]);
      expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
    },
  );

  it("answers another tool's payment with payment_resource_mismatch", async () => {
    const challenge = challengeOf(await call({ blocks: 3 }, { [PAYMENT_META_KEY]: paymentFor('other') }));
    expect(challenge.error).toBe('payment_resource_mismatch');
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
  });

  it('answers a v1 key that is no string with payment_payload_invalid', async () => {
    const challenge = challengeOf(await call({ blocks: 3 }, { 'x402.payment': { x402Version: 1 } }));
    expect(challenge.error).toBe('payment_payload_invalid');
  });

  it('takes a v1 payment under the v1 key and answers the receipt under the v1 key', async () => {
    const v2 = paymentFor();
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: v2.payload };
    const result = await call({ blocks: 3 }, { 'x402.payment': encodeHeader(v1) });
    expect(result.structuredContent).toEqual({ blocks: 3, satPerVb: 12 });
    expect(result._meta?.['x402.payment-response']).toMatchObject({ success: true, transaction: TEST_TX });
    expect(result._meta?.['x402/payment-response']).toBeUndefined();
  });
});
