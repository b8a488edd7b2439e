// A settlement whose receipt is late (anvil's automine off, a short facilitator receipt timeout):
// the first paid request ends in 502 with retry_exact_payment_payload; once the block is mined,
// the exact same payload gets the stored response and the payer is charged exactly once.
import { decodeHeaderJson, type PaymentPayload, type SettleResponse } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import {
  createEvmPaymentSigner,
  createPayingClient,
  PaymentClientError,
  type PaymentSigner,
} from '@tollbooth/fetch';
import type { Hex } from 'viem';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  balances,
  challengeOf,
  deltas,
  devnetFacilitator,
  observed,
  PRICE,
  paidRoute,
  payerAccount,
  sendPayment,
  startTollboothApp,
} from './support/interop-harness';

let devnet: Devnet;
let app: Awaited<ReturnType<typeof startTollboothApp>>;
let facilitator: ReturnType<typeof observed>;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3 });
  facilitator = observed(devnetFacilitator(devnet, { receiptTimeoutMs: 400 }));
  app = await startTollboothApp(devnet, {
    routes: { 'GET /paid': paidRoute(devnet), 'GET /other': paidRoute(devnet) },
    facilitator,
  });
});

afterEach(async () => {
  await devnet.setAutomine(true);
  await devnet.mine();
});

afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

/** Mines whatever is pending and keeps mining from now on. */
async function mineNow() {
  await devnet.setAutomine(true);
  await devnet.mine();
}

function nonceOf(header: string): string {
  return ((decodeHeaderJson(header) as PaymentPayload).payload as { authorization: { nonce: string } })
    .authorization.nonce;
}

describe('a delayed settlement receipt', () => {
  it('answers 502 retry_exact_payment_payload, then serves the stored response to the same payload, charging once', async () => {
    const account = payerAccount(devnet, 0);
    const payload = await createPaymentPayload({
      paymentRequired: challengeOf(await fetch(`${app.url}/paid`)),
      account,
    });
    const before = await balances(devnet, account.address);
    const settlesBefore = facilitator.settles;
    await devnet.setAutomine(false);

    const first = await sendPayment(`${app.url}/paid`, payload);

    expect(first.status).toBe(502);
    expect(await first.json()).toMatchObject({
      error: {
        code: 'settlement_uncertain',
        retryable: true,
        retry: { instruction: 'retry_exact_payment_payload' },
      },
    });
    expect(first.headers.get('payment-response')).toBeNull();
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: 0n, received: 0n });

    await mineNow();
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });

    const retry = await sendPayment(`${app.url}/paid`, payload);
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ ok: true, path: '/paid', run: 1 });
    const receipt = decodeHeaderJson(retry.headers.get('payment-response')!) as SettleResponse;
    expect(receipt).toMatchObject({ success: true, payer: account.address });
    const mined = await devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction as Hex });
    expect(mined.status).toBe('success');
    // The handler ran once; the retry was reconciled on chain, not settled again.
    expect(app.runs.get('/paid')).toBe(1);
    expect(facilitator.settles - settlesBefore).toBe(1);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('createPayingClient retries the exact same payload on its own and never signs a second payment', async () => {
    const account = payerAccount(devnet, 1);
    const evm = createEvmPaymentSigner({ account });
    let signed = 0;
    const signer: PaymentSigner = {
      supports: evm.supports,
      createPayload: (challenge, requirement) => {
        signed += 1;
        return evm.createPayload(challenge, requirement);
      },
    };
    const sent: string[] = [];
    const statuses: number[] = [];
    const client = createPayingClient({
      signer,
      maxAmountPerPayment: PRICE,
      retryDelayMs: 50,
      fetch: async (input, init) => {
        const request = new Request(input, init);
        const header = request.headers.get('payment-signature');
        if (header) sent.push(header);
        const response = await fetch(request);
        statuses.push(response.status);
        // The block arrives while the client waits to retry.
        if (response.status === 502) await mineNow();
        return response;
      },
    });
    const before = await balances(devnet, account.address);
    await devnet.setAutomine(false);

    const { response, receipt, attempts, payload } = await client.pay(`${app.url}/paid`);

    expect(statuses).toEqual([402, 502, 200]);
    expect(response.status).toBe(200);
    expect(attempts).toBe(2);
    expect(signed).toBe(1);
    expect(sent).toHaveLength(2);
    expect(new Set(sent).size).toBe(1);
    expect(new Set(sent.map(nonceOf))).toEqual(
      new Set([
        (payload as PaymentPayload & { payload: { authorization: { nonce: string } } }).payload.authorization
          .nonce,
      ]),
    );
    expect(receipt).toMatchObject({ success: true, payer: account.address });
    expect(client.spent).toBe(PRICE);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('a paying client counts a payment left uncertain by a 502 against its total', async () => {
    const account = payerAccount(devnet, 2);
    const client = createPayingClient({
      signer: createEvmPaymentSigner({ account }),
      maxAmountPerPayment: PRICE,
      maxTotal: PRICE,
      maxRetries: 0,
    });
    const before = await balances(devnet, account.address);
    await devnet.setAutomine(false);

    const { response } = await client.pay(`${app.url}/other`);

    expect(response.status).toBe(502);
    expect(client.spent).toBe(PRICE);
    // It may have been charged, and it was: once the block is mined, the money moved.
    await mineNow();
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
    await expect(client.pay(`${app.url}/paid`)).rejects.toSatisfy(
      (error) => error instanceof PaymentClientError && error.code === 'spend_limit_exceeded',
    );
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });
});
