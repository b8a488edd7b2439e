// The rate limits in front of the gate, on each framework through a real server: one set of
// headers on every mount (the IETF RateLimit-Policy and RateLimit fields, Retry-After on the 429),
// paths under the AI price pattern counted under the AI limit like the AI resources, and the x402
// demo's free /verify relay bounded even with the edge rate limit off; a tools/call at /mcp counted
// under the limits of its tool's HTTP twin (the same counters and fields), free MCP messages not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';

let simulator: MempoolSimulator;

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 5 });
});
afterAll(async () => {
  await simulator?.close();
  removeScratch();
});

/** What a limited answer carries: status, the two IETF fields, Retry-After, the body. */
async function answer(url: string) {
  const response = await fetch(url);
  return {
    status: response.status,
    policy: response.headers.get('ratelimit-policy'),
    limit: response.headers.get('ratelimit'),
    retryAfter: response.headers.get('retry-after'),
    legacy: [...response.headers.keys()].filter((name) => name.startsWith('x-ratelimit')),
    body: await response.text(),
  };
}

/** A JSON-RPC message (or batch) POSTed to /mcp, as a stateless client sends it. */
async function mcp(url: string, message: unknown) {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(message),
  });
  return {
    status: response.status,
    policy: response.headers.get('ratelimit-policy'),
    limit: response.headers.get('ratelimit'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

let rpcId = 0;
const toolCall = (name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: ++rpcId,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** `"name";r=<remaining>;t=<1..window>` */
const standing = (name: string, remaining: number) =>
  new RegExp(`^"${name}";r=${remaining};t=(60|[1-5]?\\d)$`);

const SERVICE_ENV = {
  OBSERVATORY_ENABLED: 'false',
  // Nothing here reaches a facilitator: the unpaid challenges need none.
  FACILITATOR_URL: 'http://127.0.0.1:9',
  PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  RATE_LIMIT_WINDOW_MS: '60000',
  AI_RATE_LIMIT_MAX: '2',
  AI_RATE_LIMIT_WINDOW_MS: '60000',
  X402_DEMO_RATE_LIMIT_MAX: '2',
  X402_DEMO_RATE_LIMIT_WINDOW_MS: '60000',
};

describe.each(FRAMEWORKS)('rate limits on the %s mount', (framework) => {
  let limited: RunningFeeService;
  let roomy: RunningFeeService;
  let unlimited: RunningFeeService;
  let tools: RunningFeeService;

  beforeAll(async () => {
    const start = (env: Record<string, string>) =>
      startTestService({ ...SERVICE_ENV, FRAMEWORK: framework, ...env }, { simulator });
    limited = await start({ RATE_LIMIT_MAX: '3' });
    roomy = await start({ RATE_LIMIT_MAX: '100' });
    unlimited = await start({ RATE_LIMIT_ENABLED: 'false' });
    tools = await start({ RATE_LIMIT_MAX: '4' });
  });
  afterAll(async () => {
    for (const service of [limited, roomy, unlimited, tools]) await service?.close();
  });

  it('answers every counted request with the IETF RateLimit fields, and the 429 with Retry-After and no body', async () => {
    const url = `${limited.url}/api/v1/fees/now`;
    const answers = [await answer(url), await answer(url), await answer(url), await answer(url)];
    expect(answers.map((a) => a.status)).toEqual([402, 402, 402, 429]);
    answers.forEach((a, i) => {
      expect(a.policy, `answer ${i}`).toBe('"paid";q=3;w=60');
      expect(a.limit, `answer ${i}`).toMatch(standing('paid', Math.max(0, 2 - i)));
      expect(a.legacy, `answer ${i}`).toEqual([]);
    });
    const refused = answers[3]!;
    expect(refused.body).toBe('');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    // A free route is not counted: no fields.
    expect((await answer(`${limited.url}/healthz`)).limit).toBeNull();
  });

  it('counts a path under the AI price pattern that no resource serves under the AI limit', async () => {
    const answers = [
      await answer(`${roomy.url}/api/v1/ai/not-a-resource`),
      await answer(`${roomy.url}/api/v1/ai/another/one`),
      await answer(`${roomy.url}/api/v1/ai/third`),
    ];
    expect(answers.map((a) => a.status)).toEqual([402, 402, 429]);
    // Both limits count it, each in the same two fields (a list, the edge limit first).
    expect(answers[0]!.policy).toBe('"paid";q=100;w=60, "ai";q=2;w=60');
    const [paid, ai] = answers[1]!.limit!.split(', ');
    expect(paid).toMatch(standing('paid', 98));
    expect(ai).toMatch(standing('ai', 0));
    expect(answers[2]!.body).toBe('');
  });

  it('bounds the x402 demo (a free /verify relay) with the edge rate limit off', async () => {
    const url = `${unlimited.url}/api/v1/x402-demo`;
    const answers = [await answer(url), await answer(url), await answer(url)];
    expect(answers.map((a) => a.status)).toEqual([402, 402, 429]);
    expect(answers[0]!.policy).toBe('"x402-demo";q=2;w=60');
    expect(answers[1]!.limit).toMatch(standing('x402-demo', 0));
    expect(answers[2]!.body).toBe('');
    // The paid routes are not limited there.
    const paid = await answer(`${unlimited.url}/api/v1/fees/now`);
    expect(paid.status).toBe(402);
    expect(paid.limit).toBeNull();
  });

  it("counts a tools/call at /mcp under its HTTP twin's limits, with the same fields; free MCP messages are not counted", async () => {
    const paidLimit = (a: { limit: string | null }) => a.limit?.split(', ')[0];
    // The decision over HTTP, then its tool: one counter.
    const http = await answer(`${tools.url}/api/v1/fees/now`);
    expect(http.limit).toMatch(standing('paid', 3));
    const decision = await mcp(tools.url, toolCall('get_fee_timing_decision'));
    expect(decision.status).toBe(200);
    expect(decision.body).toContain('payment_required');
    expect(decision.policy).toBe('"paid";q=4;w=60');
    expect(decision.limit).toMatch(standing('paid', 2));
    // An AI tool counts under the edge limit and the AI limit, as its HTTP twin does.
    const advice = await mcp(tools.url, toolCall('get_fee_advice'));
    expect(advice.policy).toBe('"paid";q=4;w=60, "ai";q=2;w=60');
    expect(paidLimit(advice)).toMatch(standing('paid', 1));
    expect(advice.limit?.split(', ')[1]).toMatch(standing('ai', 1));
    const twin = await answer(`${tools.url}/api/v1/ai/fees/advice`);
    expect(twin.limit?.split(', ')[1]).toMatch(standing('ai', 0));
    // Past the limit: the tool call is refused like the HTTP request, 429 with no body.
    const refused = await mcp(tools.url, toolCall('get_fee_timing_decision'));
    expect(refused.status).toBe(429);
    expect(refused.body).toBe('');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    // The free tool and tools/list are not counted (no fields), and still answer.
    const preview = await mcp(tools.url, toolCall('get_fee_preview'));
    expect(preview.status).toBe(200);
    expect(preview.limit).toBeNull();
    const list = await mcp(tools.url, { jsonrpc: '2.0', id: ++rpcId, method: 'tools/list' });
    expect(list.status).toBe(200);
    expect(list.limit).toBeNull();
    // One request is counted once: a batch carrying two tools/call is refused.
    const batch = await mcp(tools.url, [toolCall('get_fee_preview'), toolCall('get_fee_preview')]);
    expect(batch.status).toBe(400);
    expect(JSON.parse(batch.body)).toMatchObject({ error: { code: -32600 } });
  });
});
