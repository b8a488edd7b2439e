// The payment-identifier extension on the fee service, paid by the official client with its own
// extension helpers (@x402/extensions 2.27.0) on the devnet: every paid route advertises it, and a
// retry under the same identifier — a new signature each time, as the official client makes — is
// answered from the first payment on each framework. The broadcast's body is read by the service
// before the gate, so the identifier must still be bound to it: another transaction under the same
// identifier is a 409, never the first answer.
import { decodeHeaderJson, type PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { faucetSpend } from './fixtures/raw-tx';
import { balanceOf, challengeOf, FRAMEWORKS, removeScratch, startTestService } from './support/harness';

let devnet: Devnet;
let simulator: MempoolSimulator;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([
    startDevnet({ payers: FRAMEWORKS.length }),
    startMempoolSimulator({ scenario: 'calm', seed: 41 }),
  ]);
});

afterAll(async () => {
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

/** The official client, adding `id` to every payment as its extension helper does. */
function officialPay(payerKey: Hex, id: string) {
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(payerKey)));
  client.onBeforePaymentCreation(async ({ paymentRequired }) => {
    paymentRequired.extensions ??= {};
    appendPaymentIdentifierToExtensions(paymentRequired.extensions, id);
  });
  return wrapFetchWithPayment(fetch, client);
}

const jsonPost = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

async function read(response: Response) {
  return { status: response.status, headers: response.headers, body: await response.text() };
}

describe.each(FRAMEWORKS.map((framework, payer) => [framework, payer] as const))(
  'the payment-identifier extension on %s',
  (framework, payerIndex) => {
    let service: RunningFeeService;
    beforeAll(async () => {
      service = await startTestService({ FRAMEWORK: framework }, { devnet, simulator });
    });
    afterAll(() => service?.close());

    it('is advertised, optional, in the header and the body of every paid route’s challenge', async () => {
      const response = await fetch(`${service.url}/api/v1/fees/now`);
      expect(response.status).toBe(402);
      const body = (await response.json()) as PaymentRequired;
      for (const challenge of [challengeOf(response), body]) {
        expect(challenge.extensions?.['payment-identifier']).toMatchObject({
          info: { required: false },
          schema: { properties: { id: { minLength: 16, maxLength: 128 } } },
        });
      }
      const active = service.gate.routes.routes.filter((route) => route.availability === 'active');
      expect(active.length).toBeGreaterThan(3);
      for (const route of active) expect(route.paymentIdentifier, route.key).toEqual({ required: false });
    });

    it('answers a broadcast retried under its identifier from the first payment, and another body 409', async () => {
      const payer = devnet.accounts.payers[payerIndex]!;
      const url = `${service.url}/api/v1/broadcast`;
      const spend = faucetSpend(simulator.model, { output: 40 + 2 * payerIndex, fee: 3_000n });
      const before = await balanceOf(devnet, payer.address);
      const id = generatePaymentId('bcast_');

      const first = await read(await officialPay(payer.privateKey, id)(url, jsonPost({ hex: spend.hex })));
      expect(first.status, first.body).toBe(200);
      expect(JSON.parse(first.body)).toMatchObject({ data: { txid: spend.txid } });
      const receipt = decodeHeaderJson(first.headers.get('payment-response')!) as { success: boolean };
      expect(receipt.success).toBe(true);

      // Broadcast again, this transaction would be refused 409 already_known: the identifier answers
      // the retry from the first payment instead, byte for byte, with no second charge.
      const again = await read(await officialPay(payer.privateKey, id)(url, jsonPost({ hex: spend.hex })));
      expect(again.status).toBe(200);
      expect(again.body).toBe(first.body);
      expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));

      const other = faucetSpend(simulator.model, { output: 41 + 2 * payerIndex, fee: 3_000n });
      const conflict = await read(await officialPay(payer.privateKey, id)(url, jsonPost({ hex: other.hex })));
      expect(conflict.status).toBe(409);
      expect(JSON.parse(conflict.body)).toMatchObject({ error: { code: 'payment_identifier_conflict' } });
      expect(simulator.model.findTx(other.txid)).toBeUndefined();

      expect(await balanceOf(devnet, payer.address)).toBe(before - 10_000n);
    });
  },
);
