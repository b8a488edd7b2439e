// Interop: the official x402 client (@x402/fetch + @x402/evm) pays the decision on the devnet,
// and the decision's transaction hash is the USDC transfer on chain. Also: a graceful shutdown
// finishes a settlement that is in flight.
import { setTimeout as pause } from 'node:timers/promises';
import { decodeHeaderJson } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { decodeEventLog, type Hex, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { assertFeeDecision } from './support/contract-schemas';
import { removeScratch, signPayment, startTestService } from './support/harness';

const transferAbi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);

let devnet: Devnet;
let simulator: MempoolSimulator;
let service: RunningFeeService;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 2 }), startMempoolSimulator({ seed: 3 })]);
  service = await startTestService({}, { devnet, simulator });
});

afterAll(async () => {
  await service?.close();
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

describe('the official x402 client', () => {
  it('pays /api/v1/fees/now and gets a decision whose transaction hash is the transfer on chain', async () => {
    const payer = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
    // The devnet token sits at the canonical Base USDC address, which the default spend controls know.
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(payer)));
    const response = await pay(`${service.url}/api/v1/fees/now`);
    expect(response.status).toBe(200);
    const decision = (await response.json()) as {
      meta: { payment: { transaction_hash: Hex; network: string } };
    };
    assertFeeDecision(decision);
    const receiptHeader = decodeHeaderJson(response.headers.get('payment-response')!) as {
      transaction: string;
    };
    const hash = decision.meta.payment.transaction_hash;
    expect(hash).toBe(receiptHeader.transaction);
    expect(decision.meta.payment.network).toBe('eip155:8453');

    const receipt = await devnet.publicClient.getTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    const transfers = receipt.logs
      .filter((log) => log.address.toLowerCase() === devnet.token.address.toLowerCase())
      .flatMap((log) => {
        try {
          return [decodeEventLog({ abi: transferAbi, data: log.data, topics: log.topics })];
        } catch {
          return [];
        }
      });
    expect(transfers).toHaveLength(1);
    expect(transfers[0]!.args).toEqual({
      from: payer.address,
      to: devnet.accounts.payTo.address,
      value: 1000n,
    });
  });
});

describe('graceful shutdown', () => {
  it('finishes a settlement in flight before closing, then refuses new connections', async () => {
    const draining = await startTestService({ FRAMEWORK: 'koa' }, { devnet, simulator });
    const url = `${draining.url}/api/v1/fees/now`;
    const header = await signPayment(url, devnet.accounts.payers[1]!.privateKey);
    await devnet.setAutomine(false);
    let closed = false;
    let closing: Promise<void> | undefined;
    try {
      const inFlight = fetch(url, { headers: { 'payment-signature': header } });
      // Once the settlement transaction waits in the pool for a block, ask the service to stop.
      while ((await devnet.testClient.getTxpoolStatus()).pending === 0) await pause(20);
      closing = draining.close().then(() => {
        closed = true;
      });
      // New connections are refused at once; the request in flight keeps the service open.
      await expect(fetch(`${draining.url}/healthz`)).rejects.toThrow();
      expect(closed).toBe(false);
      await devnet.mine();
      const response = await inFlight;
      expect(response.status).toBe(200);
      assertFeeDecision(await response.json());
    } finally {
      await devnet.setAutomine(true);
    }
    await closing;
    expect(closed).toBe(true);
    await expect(fetch(`${draining.url}/healthz`)).rejects.toThrow();
  });
});
