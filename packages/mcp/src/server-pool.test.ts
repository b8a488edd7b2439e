import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createMemoryLedgerStore, createPaymentGate } from '@tollbooth/core';
import { createScriptedFacilitator, createSimpleScheme, TEST_PAY_TO } from '@tollbooth/core/testing';
import { describe, expect, it } from 'vitest';
import { defineTool, toolRoutes } from './index';
import { createToolServerPool } from './server';

const paid = defineTool({
  name: 'paid',
  description: 'A paid tool.',
  accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' },
  handler: () => ({ content: [{ type: 'text', text: 'paid' }] }),
});
const free = defineTool({
  name: 'free',
  description: 'A free tool.',
  handler: async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { content: [{ type: 'text', text: 'free' }] };
  },
});
const tools = [paid, free];
const gate = createPaymentGate({
  routes: toolRoutes(tools),
  schemes: [createSimpleScheme()],
  facilitator: createScriptedFacilitator(),
  ledger: createMemoryLedgerStore(),
});

/** One stateless JSON request on a pooled server: the server used and the JSON-RPC answer. */
async function post(pool: ReturnType<typeof createToolServerPool>, message: unknown) {
  let used: Server | undefined;
  const body = await pool.use(async (server) => {
    used = server;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    const response = await transport.handleRequest(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify(message),
      }),
    );
    return (await response.json()) as { result?: { content?: Array<{ text: string }>; tools?: unknown[] } };
  });
  return { used: used!, body };
}

const call = (id: number, name: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});

describe('createToolServerPool', () => {
  it('serves request after request on one server, built once', async () => {
    const pool = createToolServerPool({ info: { name: 'test', version: '1.0.0' }, gate, tools });
    const first = await post(pool, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(first.body.result?.tools).toHaveLength(2);
    const second = await post(pool, call(2, 'free'));
    expect(second.body.result?.content?.[0]?.text).toBe('free');
    const third = await post(pool, call(3, 'paid'));
    expect(third.body.result?.content?.[0]?.text).toContain('payment_required');
    expect(second.used).toBe(first.used);
    expect(third.used).toBe(first.used);
    expect(pool.idle).toBe(1);
  });

  it('gives concurrent requests servers of their own, each answering its own request, and keeps at most maxIdle', async () => {
    const pool = createToolServerPool({ info: { name: 'test', version: '1.0.0' }, gate, tools, maxIdle: 2 });
    const answers = await Promise.all([1, 2, 3].map((id) => post(pool, call(id, 'free'))));
    expect(new Set(answers.map((a) => a.used)).size).toBe(3);
    for (const answer of answers) expect(answer.body.result?.content?.[0]?.text).toBe('free');
    expect(pool.idle).toBe(2);
  });

  it('takes back a server whose request failed, closed and ready for the next', async () => {
    const pool = createToolServerPool({ info: { name: 'test', version: '1.0.0' }, gate, tools });
    let failed: Server | undefined;
    await expect(
      pool.use(async (server) => {
        failed = server;
        await server.connect(
          new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: undefined,
            enableJsonResponse: true,
          }),
        );
        throw new Error('the request went away');
      }),
    ).rejects.toThrow('the request went away');
    expect(failed?.transport).toBeUndefined();
    const next = await post(pool, call(1, 'free'));
    expect(next.used).toBe(failed);
    expect(next.body.result?.content?.[0]?.text).toBe('free');
  });
});
