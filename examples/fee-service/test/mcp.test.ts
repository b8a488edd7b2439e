// The fee service as an MCP server at /mcp (streamable HTTP), driven the way an agent drives it:
// the MCP SDK's own client lists the tools with their prices, calls the free preview, pays for the
// decision and two catalog tools on the devnet, and the payer's balance falls by exactly the
// prices. A tool that fails after verification charges nothing; one payment in ten concurrent
// calls transfers once; one payment is one payment across MCP and HTTP. Fastify here, then
// Express and Koa answer the same.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { encodeHeader, type PaymentPayload, type PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import { createEvmPaymentSigner, PaymentClientError } from '@tollbooth/fetch';
import { createPayingMcpClient } from '@tollbooth/fetch/mcp';
import { experimental_createMCPClient } from 'ai';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPayment } from 'x402-mcp/client';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { assertFeeDecision } from './support/contract-schemas';
import { balanceOf, removeScratch, startTestService } from './support/harness';
import { judgeNextBlock } from './support/observatory';

let devnet: Devnet;
let simulator: MempoolSimulator;
let service: RunningFeeService;
let client: Client;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 6 }), startMempoolSimulator({ seed: 3 })]);
  service = await startTestService({ RATE_LIMIT_ENABLED: 'false' }, { devnet, simulator });
  // the scoreboard it buys has a judged row (one with nothing judged is not sold)
  await judgeNextBlock(service, simulator);
  client = await connect(service);
});

afterAll(async () => {
  await client?.close();
  await service?.close();
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

async function connect(on: RunningFeeService): Promise<Client> {
  const connected = new Client({ name: 'agent', version: '1.0.0' });
  await connected.connect(new StreamableHTTPClientTransport(new URL(`${on.url}/mcp`)));
  return connected;
}

type Call = { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };
const call = async (c: Client, params: Call) => (await c.callTool(params)) as CallToolResult;
const payerKey = (i: number) => devnet.accounts.payers[i]!.privateKey as Hex;

/** Calls a paid tool unpaid, signs its challenge with payer `i`; the payment to send. */
async function paymentFor(c: Client, name: string, args: Record<string, unknown>, i: number) {
  const challenge = await call(c, { name, arguments: args });
  expect(challenge.isError).toBe(true);
  const paymentRequired = challenge.structuredContent as PaymentRequired;
  expect(paymentRequired.error).toBe('payment_required');
  return createPaymentPayload({ paymentRequired, account: privateKeyToAccount(payerKey(i)) });
}

const paid = (name: string, args: Record<string, unknown>, payment: PaymentPayload): Call => ({
  name,
  arguments: args,
  _meta: { 'x402/payment': payment },
});

describe('an agent over MCP', () => {
  it('lists the tools with their prices, calls the free preview, pays for the decision and two catalog tools', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('get_fee_preview')?._meta).toBeUndefined();
    const decisionTool = byName.get('get_fee_timing_decision')!;
    expect(decisionTool.description).toContain('Costs 0.001 USDC on eip155:8453 per call');
    expect(decisionTool._meta?.['tollbooth/price']).toMatchObject({
      resource: 'mcp://tool/get_fee_timing_decision',
      accepts: [{ amount: '1000', payTo: service.payTo }],
    });
    // Every paid resource of the registry is a tool, and only the preview among the free ones.
    const paidKeys = service.publications.filter((p) => p.resource.price).map((p) => p.resource);
    expect(tools.filter((tool) => tool._meta?.['tollbooth/price']).length).toBe(paidKeys.length);

    const preview = await call(client, { name: 'get_fee_preview', arguments: {} });
    expect(preview.isError).toBeUndefined();
    expect((preview.structuredContent as { data: object }).data).toHaveProperty('fee_rates_sat_vb');

    const payer = privateKeyToAccount(payerKey(0)).address;
    const before = await balanceOf(devnet, payer);
    const receipts: unknown[] = [];
    const bought: Array<[string, Record<string, unknown>, bigint]> = [
      ['get_fee_timing_decision', {}, 1000n],
      ['get_next_block', {}, 10_000n],
      ['get_observatory_scoreboard', { hours: 24 }, 5000n],
    ];
    for (const [name, args] of bought) {
      const result = await call(client, paid(name, args, await paymentFor(client, name, args, 0)));
      expect(result.isError, JSON.stringify(result).slice(0, 300)).toBeUndefined();
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
      const receipt = result._meta?.['x402/payment-response'] as { success: boolean; transaction: string };
      expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
      receipts.push(receipt.transaction);
      if (name === 'get_fee_timing_decision') {
        assertFeeDecision(result.structuredContent);
        expect(result.structuredContent).toMatchObject({
          meta: { payment: { transaction_hash: receipt.transaction } },
        });
      }
    }
    expect(new Set(receipts).size).toBe(3);
    const prices = bought.reduce((sum, [, , price]) => sum + price, 0n);
    expect(before - (await balanceOf(devnet, payer))).toBe(prices);
  });

  it('charges nothing for a tool that fails after verification, and the payment stays usable', async () => {
    const payer = privateKeyToAccount(payerKey(1)).address;
    const before = await balanceOf(devnet, payer);
    const unknown = { txid: 'ab'.repeat(32) };
    const payment = await paymentFor(client, 'explain_transaction', unknown, 1);
    const failed = await call(client, paid('explain_transaction', unknown, payment));
    expect(failed.isError).toBe(true);
    expect((failed.structuredContent as { error: { code: string } }).error.code).toBe('unknown_transaction');
    expect(failed._meta).toBeUndefined();
    expect(await balanceOf(devnet, payer)).toBe(before);
  });

  it('runs one payment sent in ten concurrent calls once and transfers once; a retry gets the same bytes', async () => {
    const payer = privateKeyToAccount(payerKey(2)).address;
    const before = await balanceOf(devnet, payer);
    const payment = await paymentFor(client, 'get_fee_landscape', {}, 2);
    const clients = await Promise.all(Array.from({ length: 10 }, () => connect(service)));
    try {
      const results = await Promise.all(clients.map((c) => call(c, paid('get_fee_landscape', {}, payment))));
      for (const result of results) expect(JSON.stringify(result)).toBe(JSON.stringify(results[0]));
      expect(results[0]!._meta?.['x402/payment-response']).toMatchObject({ success: true });
      const retried = await call(client, paid('get_fee_landscape', {}, payment));
      expect(JSON.stringify(retried)).toBe(JSON.stringify(results[0]));
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    expect(before - (await balanceOf(devnet, payer))).toBe(5000n);
  });

  it('spends one payment once across transports: settled over MCP, it is already used over HTTP', async () => {
    const payment = await paymentFor(client, 'get_fee_landscape', {}, 3);
    expect((await call(client, paid('get_fee_landscape', {}, payment)))._meta).toHaveProperty(
      'x402/payment-response',
    );
    const http = await fetch(`${service.url}/api/v1/fees/landscape`, {
      headers: { 'payment-signature': encodeHeader(payment) },
    });
    expect(http.status).toBe(402);
    expect(((await http.json()) as { error: string }).error).toBe('payment_already_used');
  });

  it('refuses invalid arguments before any challenge and answers an unknown tool with -32602', async () => {
    const invalid = await call(client, { name: 'explain_transaction', arguments: { txid: 'nope' } });
    expect(invalid.isError).toBe(true);
    expect(invalid.structuredContent).toBeUndefined();
    expect((invalid.content[0] as { text: string }).text).toMatch(
      /^Invalid arguments for tool explain_transaction: txid/,
    );
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('answers an estimator the observatory does not record, and an empty interval, before any challenge', async () => {
    const unknown = await call(client, { name: 'get_observatory_estimates', arguments: { source: 'nope' } });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ error: { code: 'unknown_source' } });
    const empty = await call(client, {
      name: 'get_observatory_estimates',
      arguments: { since: '2020-01-01T00:00:00Z', until: '2020-01-02T00:00:00Z' },
    });
    expect(empty.structuredContent).toMatchObject({ error: { code: 'no_data' } });
  });
});

describe('the paying MCP client (@tollbooth/fetch/mcp)', () => {
  const signerOf = (i: number) => createEvmPaymentSigner({ account: privateKeyToAccount(payerKey(i)) });

  it('pays tools within its per-call and per-session limits, keeps the receipts, and refuses beyond them', async () => {
    const account = privateKeyToAccount(payerKey(4));
    const before = await balanceOf(devnet, account.address);
    const payer = createPayingMcpClient({
      client,
      signer: signerOf(4),
      maxAmountPerPayment: 5000n,
      maxTotal: 6000n,
    });
    const free = await payer.callTool({ name: 'get_fee_preview' });
    expect(free.payload).toBeUndefined();
    const decision = await payer.callTool({ name: 'get_fee_timing_decision' });
    expect(decision.result.isError).toBeUndefined();
    expect(decision.receipt).toMatchObject({ success: true, payer: account.address });
    // Built from the chosen requirement alone: compact, whatever the challenge carried besides.
    expect(JSON.stringify(decision.payload).length).toBeLessThan(4096);
    const landscape = await payer.callTool({ name: 'get_fee_landscape' });
    expect(landscape.receipt?.success).toBe(true);
    expect(payer.spent).toBe(6000n);
    expect(payer.receipts.map((r) => r.transaction)).toEqual([
      decision.receipt!.transaction,
      landscape.receipt!.transaction,
    ]);
    // 0.005 fits the call limit but not what is left of the session's; 0.01 fits neither.
    await expect(payer.callTool({ name: 'get_fee_landscape' })).rejects.toMatchObject({
      code: 'spend_limit_exceeded',
    });
    await expect(payer.callTool({ name: 'get_next_block' })).rejects.toBeInstanceOf(PaymentClientError);
    expect(before - (await balanceOf(devnet, account.address))).toBe(6000n);
  });

  it('gives a released payment back to the limits: a tool that fails is not spent', async () => {
    const payer = createPayingMcpClient({
      client,
      signer: signerOf(5),
      maxAmountPerPayment: 10_000n,
      maxTotal: 10_000n,
    });
    const failed = await payer.callTool({
      name: 'explain_transaction',
      arguments: { txid: 'cd'.repeat(32) },
    });
    expect(failed.result.isError).toBe(true);
    expect(failed.receipt).toBeUndefined();
    expect(payer.spent).toBe(0n);
  });

  it('is what tollbooth-pay --tool drives: it pays a tool and prints the transaction', async () => {
    const cli = fileURLToPath(new URL('../../../packages/fetch/src/cli.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--conditions=tollbooth-source',
        '--import',
        'tsx',
        cli,
        `${service.url}/mcp`,
        '--tool',
        'get_fee_timing_decision',
        '--max',
        '0.001',
      ],
      { env: { ...process.env, TOLLBOOTH_PAYER_KEY: payerKey(5) }, timeout: 60_000 },
    );
    expect(stdout).toMatch(/^tool get_fee_timing_decision: result\n/);
    expect(stdout).toMatch(/amount {6}0\.001 USDC on eip155:8453/);
    expect(stdout).toMatch(/transaction 0x[0-9a-f]{64}\n/);
    expect(stdout).toContain('"algorithm_version":"send-wait-v1"');
  });
});

describe("Vercel's x402-mcp client (x402 v1)", () => {
  it('pays a fee-service tool through its generatePaymentAuthorization tool, driven directly', async () => {
    // The AI SDK's MCP client over the MCP SDK's streamable HTTP transport, wrapped by x402-mcp.
    const mcp = await experimental_createMCPClient({
      transport: new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`)),
    });
    try {
      const account = privateKeyToAccount(payerKey(0));
      const before = await balanceOf(devnet, account.address);
      const wrapped = await withPayment(mcp as never, { account, network: 'base' });
      const tools = (await wrapped.tools()) as unknown as Record<
        string,
        {
          execute(
            args: Record<string, unknown>,
            options: { toolCallId: string; messages: [] },
          ): Promise<unknown>;
        }
      >;
      const options = { toolCallId: 'call-1', messages: [] as [] };
      const unpaid = (await tools['get_fee_landscape']!.execute({}, options)) as CallToolResult;
      const challenge = unpaid.structuredContent as PaymentRequired;
      expect(challenge.error).toBe('payment_required');
      // The model's part: restate the requirement in x402 v1 form, which is all this client reads.
      const [requirement] = challenge.accepts;
      const { paymentAuthorization } = (await tools['generatePaymentAuthorization']!.execute(
        {
          paymentRequirements: {
            scheme: 'exact',
            network: 'base',
            maxAmountRequired: requirement!.amount,
            resource: challenge.resource.url,
            description: challenge.resource.description ?? '',
            mimeType: challenge.resource.mimeType ?? 'application/json',
            payTo: requirement!.payTo,
            maxTimeoutSeconds: requirement!.maxTimeoutSeconds,
            asset: requirement!.asset,
            extra: requirement!.extra,
          },
        },
        options,
      )) as { paymentAuthorization: string };
      const result = (await tools['get_fee_landscape']!.execute(
        { paymentAuthorization },
        options,
      )) as CallToolResult;
      expect(result.isError, JSON.stringify(result).slice(0, 300)).toBeUndefined();
      expect(result.structuredContent).toHaveProperty('data');
      expect(result._meta?.['x402.payment-response']).toMatchObject({
        success: true,
        payer: account.address,
      });
      expect(before - (await balanceOf(devnet, account.address))).toBe(5000n);
    } finally {
      await mcp.close();
    }
  });
});

/**
 * The MCP protocol itself, checked by `@modelcontextprotocol/conformance` against `/mcp`: the
 * server scenarios that apply to a server selling tools. The others need fixtures this server does
 * not have (docs/mcp.md#mcp-conformance says which and why).
 */
describe('@modelcontextprotocol/conformance', () => {
  const bin = fileURLToPath(new URL('../../../node_modules/.bin/conformance', import.meta.url));
  it.each(['server-initialize', 'ping', 'tools-list'])(
    'passes the server scenario %s against /mcp',
    async (scenario) => {
      const cwd = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
      try {
        const { stdout } = await promisify(execFile)(
          bin,
          ['server', '--url', `${service.url}/mcp`, '--scenario', scenario],
          { cwd },
        );
        expect(stdout).toMatch(/Passed: (\d+)\/\1, 0 failed/);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
  );
});

describe.each(['express', 'koa'] as const)('/mcp on %s', (framework) => {
  let other: RunningFeeService;
  let otherClient: Client;
  beforeAll(async () => {
    other = await startTestService(
      { FRAMEWORK: framework, RATE_LIMIT_ENABLED: 'false' },
      { devnet, simulator },
    );
    otherClient = await connect(other);
  });
  afterAll(async () => {
    await otherClient?.close();
    await other?.close();
  });

  it('lists the same tools and sells the decision', async () => {
    const [mine, theirs] = await Promise.all([client.listTools(), otherClient.listTools()]);
    expect(theirs.tools.map((t) => t.name)).toEqual(mine.tools.map((t) => t.name));
    const payment = await paymentFor(otherClient, 'get_fee_timing_decision', {}, 3);
    const result = await call(otherClient, paid('get_fee_timing_decision', {}, payment));
    expect(result.isError).toBeUndefined();
    assertFeeDecision(result.structuredContent);
  });
});
