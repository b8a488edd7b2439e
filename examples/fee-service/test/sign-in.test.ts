// The fee service offers sign-in on the observatory and the landscape (docs/sign-in-with-x.md#the-fee-service):
// the official x402 client (@x402/fetch around @x402/extensions' wrapFetchWithSIWx) pays once and
// polls by signing within the pass, one transfer; the timing decision stays one payment per decision.
import { SIGN_IN_EXTENSION } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { challengeOf, removeScratch, startTestService } from './support/harness';
import { judgeNextBlock } from './support/observatory';

let devnet: Devnet;
let simulator: MempoolSimulator;
let service: RunningFeeService;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 3 }), startMempoolSimulator({ seed: 4 })]);
  service = await startTestService({}, { devnet, simulator });
  // A scoreboard with nothing judged is not sold (404 no_data before any challenge).
  await judgeNextBlock(service, simulator);
});

afterAll(async () => {
  await service?.close();
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

/** The official client that signs in before it pays, for a devnet payer. */
function officialClient(payerIndex: number) {
  const account = privateKeyToAccount(devnet.accounts.payers[payerIndex]!.privateKey);
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  return { account, fetch: wrapFetchWithPayment(wrapFetchWithSIWx(fetch, account), client) };
}

describe('sign-in on the fee service', () => {
  it.each([
    ['/api/v1/fees/landscape', 0],
    ['/api/v1/fees/observatory/scoreboard', 1],
  ])('sells %s once for a five-minute pass: three polls by signing, one transfer', async (path, payer) => {
    const { account, fetch: pay } = officialClient(payer);
    const before = await devnet.balanceOf(account.address);
    const receipts: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await pay(`${service.url}${path}`);
      expect(response.status, `poll ${i + 1}`).toBe(200);
      await response.json();
      receipts.push(response.headers.has('payment-response'));
    }
    expect(receipts).toEqual([true, false, false, false]);
    expect(before - (await devnet.balanceOf(account.address))).toBe(5000n);
    // Counted apart: three 200s with no revenue, one settled payment, one transfer.
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    const count = (name: string, labels: string) =>
      Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
    expect(count('fee_service_payments_total', `route="${path}",outcome="signed_in"`)).toBe(3);
    expect(count('fee_service_payments_total', `route="${path}",outcome="settled"`)).toBe(1);
  });

  it('keeps the decision one payment per decision: no sign-in offer, each answer paid', async () => {
    const url = `${service.url}/api/v1/fees/now`;
    const challenge = challengeOf(await fetch(url));
    expect(challenge.extensions?.[SIGN_IN_EXTENSION]).toBeUndefined();
    const landscape = challengeOf(await fetch(`${service.url}/api/v1/fees/landscape`));
    expect(landscape.extensions?.[SIGN_IN_EXTENSION]).toMatchObject({
      info: { domain: new URL(service.url).host, uri: `${service.url}/api/v1/fees/landscape` },
    });
    const { account, fetch: pay } = officialClient(2);
    const before = await devnet.balanceOf(account.address);
    for (let i = 0; i < 2; i++) {
      const response = await pay(url);
      expect(response.status).toBe(200);
      expect(response.headers.has('payment-response')).toBe(true);
    }
    expect(before - (await devnet.balanceOf(account.address))).toBe(2000n);
  });
});
