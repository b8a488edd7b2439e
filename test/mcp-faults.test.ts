// A paid MCP tool call whose settle answer is lost: the fee service behind an external facilitator
// (the kit's fault proxy in front of an honest one) with its own chain reader. The agent gets the
// distinct settlement_uncertain result with the retry instruction (never fresh accepts), retries
// the exact payload and gets the result; the chain shows one transfer. On SQLite, on PostgreSQL,
// and on two instances sharing PostgreSQL (the retry lands on the other instance).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type FaultKit, MCP_AUDITS, runMcpAudits, startFaultKit } from '@tollbooth/conformance';
import type { PaymentRequired } from '@tollbooth/core';
import { createPaymentPayload } from '@tollbooth/evm';
import { createEvmPaymentSigner } from '@tollbooth/fetch';
import { createPayingMcpClient } from '@tollbooth/fetch/mcp';
import { parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../examples/fee-service/src/config';
import { type RunningFeeService, startFeeService } from '../examples/fee-service/src/service';
import { DATABASE_URL } from './support/ledger-harness';

const TOOL = 'get_fee_landscape';
const PRICE = 5000n;
const scratch = mkdtempSync(join(tmpdir(), 'mcp-faults-'));
const balanceAbi = parseAbi(['function balanceOf(address) view returns (uint256)']);
let kit: FaultKit;
let counter = 0;

beforeAll(async () => {
  kit = await startFaultKit();
});
afterAll(async () => {
  await kit?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function feeService(ledgerUrl: string, instanceId: string): Promise<RunningFeeService> {
  const { chain } = kit;
  return startFeeService(
    loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      LEDGER_URL: ledgerUrl,
      INSTANCE_ID: instanceId,
      OBSERVATORY_ENABLED: 'false',
      SIMULATOR_HISTORY_HOURS: '0',
      RATE_LIMIT_ENABLED: 'false',
      FACILITATOR_URL: kit.facilitatorUrl,
      FACILITATOR_TIMEOUT_MS: '1000',
      FACILITATOR_SETTLE_TIMEOUT_MS: '2000',
      RPC_URL: chain.rpcUrl,
      NETWORK: `eip155:${chain.chainId}`,
      ASSET: chain.token.address,
      ASSET_NAME: chain.token.name,
      ASSET_VERSION: chain.token.version,
      PAY_TO: chain.payTo,
    }),
  );
}

async function connect(service: RunningFeeService): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`)));
  return client;
}

const balance = (address: string) =>
  kit.devnet.devnet.publicClient.readContract({
    address: kit.chain.token.address,
    abi: balanceAbi,
    functionName: 'balanceOf',
    args: [address as `0x${string}`],
  });

/**
 * Pays the tool through `first` with the settle answer dropped, then retries the exact payload
 * through `second` until it is served; what the agent saw and the payer's balance change.
 */
async function lostSettleAnswer(first: RunningFeeService, second: RunningFeeService, payerIndex: number) {
  const [a, b] = await Promise.all([connect(first), connect(second)]);
  try {
    const account = privateKeyToAccount(kit.chain.payers[payerIndex]!);
    const before = await balance(account.address);
    const challenge = (await a.callTool({ name: TOOL, arguments: {} })) as CallToolResult;
    const payment = await createPaymentPayload({
      paymentRequired: challenge.structuredContent as PaymentRequired,
      account,
    });
    const params = { name: TOOL, arguments: {}, _meta: { 'x402/payment': payment } };
    kit.proxy.setMode('settle-answer-dropped');
    let uncertain: CallToolResult;
    try {
      uncertain = (await a.callTool(params)) as CallToolResult;
    } finally {
      kit.proxy.setMode('pass');
    }
    let served: CallToolResult | undefined;
    let retries = 0;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; retries++) {
      const retried = (await b.callTool(params)) as CallToolResult;
      if (!retried.isError) {
        served = retried;
        break;
      }
      expect((retried.structuredContent as { error?: { code?: string } }).error?.code).toMatch(
        /^(settlement_uncertain|payment_in_progress)$/,
      );
      await pause(250);
    }
    return { uncertain, served, retries, charged: before - (await balance(account.address)) };
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

function expectUncertainThenServed(outcome: Awaited<ReturnType<typeof lostSettleAnswer>>) {
  const { uncertain, served, charged } = outcome;
  expect(uncertain.isError).toBe(true);
  expect(uncertain.structuredContent).toMatchObject({
    error: {
      code: 'settlement_uncertain',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
    },
  });
  expect(JSON.stringify(uncertain)).not.toContain('accepts');
  expect(served, 'the retried payload was never served').toBeDefined();
  expect(served!.structuredContent).toHaveProperty('data');
  expect(served!._meta?.['x402/payment-response']).toMatchObject({ success: true });
  expect(charged).toBe(PRICE);
}

describe('a lost settle answer on an MCP tool call', () => {
  it('on SQLite: settlement_uncertain, then the retried payload gets the result with one transfer', async () => {
    const service = await feeService(`sqlite:${join(scratch, `ledger-${++counter}.sqlite`)}`, 'mcp-sqlite');
    try {
      expectUncertainThenServed(await lostSettleAnswer(service, service, 0));
    } finally {
      await service.close();
    }
  }, 90_000);

  it('on PostgreSQL, and with the retry on a second instance sharing it', async () => {
    const [one, two] = await Promise.all([
      feeService(DATABASE_URL, 'mcp-pg-one'),
      feeService(DATABASE_URL, 'mcp-pg-two'),
    ]);
    try {
      expectUncertainThenServed(await lostSettleAnswer(one, one, 0));
      expectUncertainThenServed(await lostSettleAnswer(one, two, 0));
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  }, 120_000);
});

describe('the reconciler and an uncertain MCP payment', () => {
  it('resolves it in the background as for HTTP: settled from the chain with no retry, then the retried payload gets the stored result', async () => {
    const service = await feeService(
      `sqlite:${join(scratch, `ledger-${++counter}.sqlite`)}`,
      'mcp-reconciler',
    );
    const client = await connect(service);
    try {
      const account = privateKeyToAccount(kit.chain.payers[0]!);
      const before = await balance(account.address);
      const challenge = (await client.callTool({ name: TOOL, arguments: {} })) as CallToolResult;
      const payment = await createPaymentPayload({
        paymentRequired: challenge.structuredContent as PaymentRequired,
        account,
      });
      const params = { name: TOOL, arguments: {}, _meta: { 'x402/payment': payment } };
      kit.proxy.setMode('settle-answer-dropped');
      let uncertain: CallToolResult;
      try {
        uncertain = (await client.callTool(params)) as CallToolResult;
      } finally {
        kit.proxy.setMode('pass');
      }
      expect((uncertain.structuredContent as { error: { code: string } }).error.code).toBe(
        'settlement_uncertain',
      );
      const nonce = (
        payment.payload as { authorization: { nonce: string } }
      ).authorization.nonce.toLowerCase();
      const ours = async () =>
        (await service.ledger.query({ payer: account.address, limit: 20 })).find((e) =>
          e.id.toLowerCase().endsWith(nonce),
        );
      expect((await ours())?.state).toBe('uncertain');
      let entry = await ours();
      for (const deadline = Date.now() + 20_000; entry?.state !== 'settled' && Date.now() < deadline; ) {
        await pause(250);
        entry = await ours();
      }
      expect(entry?.state, 'the reconciler did not settle the entry').toBe('settled');
      expect(entry?.route).toBe(`TOOL /${TOOL}`);
      const served = (await client.callTool(params)) as CallToolResult;
      expect(served.structuredContent).toHaveProperty('data');
      expect(served._meta?.['x402/payment-response']).toMatchObject({
        success: true,
        transaction: entry?.transaction,
      });
      expect(before - (await balance(account.address))).toBe(PRICE);
    } finally {
      await client.close();
      await service.close();
    }
  }, 90_000);
});

describe('the paying MCP client after a lost settle answer', () => {
  it('resends the exact same payload, never signs a second payment, and gets the result with one transfer', async () => {
    const service = await feeService(`sqlite:${join(scratch, `ledger-${++counter}.sqlite`)}`, 'mcp-client');
    const client = await connect(service);
    try {
      const account = privateKeyToAccount(kit.chain.payers[0]!);
      const signer = createEvmPaymentSigner({ account });
      let signed = 0;
      const counting = {
        ...signer,
        createPayload: (...args: Parameters<typeof signer.createPayload>) => {
          signed++;
          return signer.createPayload(...args);
        },
      };
      // The first tools/call with the payment loses its settle answer; the resends find it on chain.
      const sent: unknown[] = [];
      const watched = {
        callTool: async (params: Parameters<Client['callTool']>[0]) => {
          if (params._meta) {
            sent.push(params._meta);
            if (sent.length === 1) kit.proxy.setMode('settle-answer-dropped');
          }
          try {
            return await client.callTool(params);
          } finally {
            kit.proxy.setMode('pass');
          }
        },
      };
      const payer = createPayingMcpClient({
        client: watched,
        signer: counting,
        maxAmountPerPayment: PRICE,
        retryDelayMs: 200,
        maxRetries: 8,
      });
      const before = await balance(account.address);
      const call = await payer.callTool({ name: TOOL });
      expect(call.result.isError).toBeUndefined();
      expect(call.receipt?.success).toBe(true);
      expect(call.attempts).toBeGreaterThan(1);
      expect(signed).toBe(1);
      expect(new Set(sent.map((meta) => JSON.stringify(meta))).size).toBe(1);
      expect(payer.spent).toBe(PRICE);
      expect(before - (await balance(account.address))).toBe(PRICE);
    } finally {
      await client.close();
      await service.close();
    }
  }, 90_000);
});

describe('the MCP audit group of @tollbooth/conformance', () => {
  it("passes every MCP audit against the fee service's /mcp, each payment charged once on chain", async () => {
    const service = await feeService(`sqlite:${join(scratch, `ledger-${++counter}.sqlite`)}`, 'mcp-audits');
    try {
      const results = await runMcpAudits(
        { url: `${service.url}/mcp`, tool: TOOL },
        { chain: { ...kit.chain, unknownTransactionWaitMs: 1_000 }, faults: kit.proxy, recoveryMs: 15_000 },
      );
      expect(results.filter((r) => r.status !== 'passed')).toEqual([]);
      expect(results.map((r) => r.id)).toEqual(MCP_AUDITS.map((a) => a.id));
    } finally {
      await service.close();
    }
  }, 180_000);

  it('skips the audit that needs the fault proxy without one, and fails a server that serves the content of a lost settlement', async () => {
    const service = await feeService(`sqlite:${join(scratch, `ledger-${++counter}.sqlite`)}`, 'mcp-audits-2');
    try {
      const needsFaults = MCP_AUDITS.filter((a) => a.needsFaults);
      const [skipped] = await runMcpAudits(
        { url: `${service.url}/mcp`, tool: TOOL },
        { chain: kit.chain, audits: needsFaults },
      );
      expect(skipped).toMatchObject({ id: 'AMCP-07', status: 'skipped' });
      // A switch that never drops the answer: the first call is served, which AMCP-07 calls a failure.
      const [failed] = await runMcpAudits(
        { url: `${service.url}/mcp`, tool: TOOL },
        { chain: kit.chain, audits: needsFaults, faults: { setMode: () => undefined } },
      );
      expect(failed).toMatchObject({ id: 'AMCP-07', status: 'failed' });
      expect(failed?.message).toMatch(/code of the first answer/);
    } finally {
      await service.close();
    }
  }, 120_000);
});
