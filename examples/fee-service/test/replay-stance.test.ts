// One payment payload sent five times at once to the fee service on the devnet, in each replay
// mode (docs/ledger.md#replay-a-stance): by default five identical 200s carrying one transaction;
// with REPLAY=strict one 200 and four refusals (402 payment_already_used, or 409 while the first is
// in flight), then the same payload refused again. One transfer on chain either way.
import { decodeHeaderJson } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { parseAbiItem } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { balanceOf, removeScratch, signPayment, startTestService } from './support/harness';

const PATH = '/api/v1/fees/now';
const PRICE = 1000n;
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

let devnet: Devnet;
let simulator: MempoolSimulator;
const services: RunningFeeService[] = [];

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 2 }), startMempoolSimulator({ seed: 9 })]);
});
afterAll(async () => {
  await Promise.all(services.map((s) => s.close()));
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

/** The token transfers from `payer` since `fromBlock`. */
async function transfersFrom(payer: `0x${string}`, fromBlock: bigint) {
  return devnet.publicClient.getLogs({
    address: devnet.token.address,
    event: TRANSFER,
    args: { from: payer },
    fromBlock,
  });
}

/** Sends one signed payload five times at once; the answers, the payer's charge and its transfers. */
async function fiveAtOnce(service: RunningFeeService, payerIndex: number) {
  const payer = devnet.accounts.payers[payerIndex]!;
  const url = `${service.url}${PATH}`;
  const header = await signPayment(url, payer.privateKey);
  const fromBlock = await devnet.publicClient.getBlockNumber();
  const before = await balanceOf(devnet, payer.address);
  const send = async () => {
    const response = await fetch(url, { headers: { 'payment-signature': header } });
    const body = (await response.json()) as { error?: string | { code: string } };
    const receipt = response.headers.get('payment-response');
    return {
      status: response.status,
      code: typeof body.error === 'string' ? body.error : body.error?.code,
      transaction: receipt ? (decodeHeaderJson(receipt) as { transaction: string }).transaction : undefined,
    };
  };
  const answers = await Promise.all(Array.from({ length: 5 }, send));
  return {
    answers,
    again: await send(),
    charged: before - (await balanceOf(devnet, payer.address)),
    transfers: await transfersFrom(payer.address, fromBlock),
  };
}

describe('one payload sent five times at once', () => {
  it('gets five 200s with one transaction by default, and the stored answer again afterwards', async () => {
    const service = await startTestService(
      { RATE_LIMIT_ENABLED: 'false', OBSERVATORY_ENABLED: 'false' },
      { devnet, simulator },
    );
    services.push(service);
    const { answers, again, charged, transfers } = await fiveAtOnce(service, 0);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.transaction)).size).toBe(1);
    expect(again).toEqual(answers[0]);
    expect(charged).toBe(PRICE);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]!.transactionHash).toBe(answers[0]!.transaction);
  });

  it('gets one 200 and four refusals with REPLAY=strict, and a refusal afterwards', async () => {
    const service = await startTestService(
      { REPLAY: 'strict', RATE_LIMIT_ENABLED: 'false', OBSERVATORY_ENABLED: 'false' },
      { devnet, simulator },
    );
    services.push(service);
    const { answers, again, charged, transfers } = await fiveAtOnce(service, 1);
    const paid = answers.filter((a) => a.status === 200);
    expect(paid).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${a.code}`);
    expect(refused).toHaveLength(4);
    for (const refusal of refused)
      expect(['402 payment_already_used', '409 payment_in_progress']).toContain(refusal);
    expect(again).toMatchObject({ status: 402, code: 'payment_already_used' });
    expect(charged).toBe(PRICE);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]!.transactionHash).toBe(paid[0]!.transaction);
  });
});
