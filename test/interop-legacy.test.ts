// Legacy x402 v1 against Tollbooth: the official v1 client (x402-fetch 1.2.0) pays a v1 route with
// X-PAYMENT and gets X-PAYMENT-RESPONSE; a v2 payload in X-PAYMENT is accepted on a v2 route.
import { decodeHeaderJson, type PaymentRequiredV1, type SettleResponse } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import { createWalletClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchWithPaymentV1 } from 'x402-fetch';
import {
  balances,
  challengeOf,
  deltas,
  devnetFacilitator,
  errorCodeOf,
  observed,
  PRICE,
  paidRoute,
  payerAccount,
  sendPayment,
  startTollboothApp,
} from './support/interop-harness';
import { describeRelease, OFFICIAL_RELEASES } from './support/official-releases';

let devnet: Devnet;
let app: Awaited<ReturnType<typeof startTollboothApp>>;
let facilitator: ReturnType<typeof observed>;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 4 });
  facilitator = observed(devnetFacilitator(devnet));
  app = await startTollboothApp(devnet, {
    routes: { 'GET /v1': paidRoute(devnet, { x402Version: 1 }), 'GET /v2': paidRoute(devnet) },
    facilitator,
  });
});

afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

describe('x402 v1 interop', () => {
  it('serves the v1 challenge in the body with v1 fields and network names, and no PAYMENT-REQUIRED header', async () => {
    const response = await fetch(`${app.url}/v1`);
    expect(response.status).toBe(402);
    expect(response.headers.get('payment-required')).toBeNull();
    const body = (await response.json()) as PaymentRequiredV1;
    expect(body).toMatchObject({ x402Version: 1, error: 'payment_required' });
    expect(body.accepts).toEqual([
      expect.objectContaining({
        scheme: 'exact',
        network: 'base',
        maxAmountRequired: PRICE.toString(),
        resource: `${app.url}/v1`,
        payTo: devnet.accounts.payTo.address,
        asset: devnet.token.address,
        extra: { name: devnet.token.name, version: devnet.token.version },
      }),
    ]);
    expect(body.accepts[0]).not.toHaveProperty('amount');
  });

  it('the official v1 client pays a v1 route with X-PAYMENT and gets X-PAYMENT-RESPONSE', async () => {
    const account = payerAccount(devnet, 0);
    const wallet = createWalletClient({ account, chain: devnet.chain, transport: http(devnet.rpcUrl) });
    const payV1 = wrapFetchWithPaymentV1(fetch, wallet as never);
    const before = await balances(devnet, account.address);
    const settlesBefore = facilitator.settles;

    const response = await payV1(`${app.url}/v1`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, path: '/v1', run: 1 });
    expect(response.headers.get('payment-response')).toBeNull();
    const receipt = decodeXPaymentResponse(response.headers.get('x-payment-response')!);
    expect(receipt).toMatchObject({ success: true, network: 'base', payer: account.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(facilitator.settles - settlesBefore).toBe(1);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it.each(OFFICIAL_RELEASES.map((release) => [describeRelease(release), release] as const))(
    'the official v2 client (%s) with a v1 registration pays a v1 route with X-PAYMENT',
    async (_title, release) => {
      const account = payerAccount(devnet, 2);
      const client = new release.fetch.x402Client().registerV1(
        'base',
        new release.evmClientV1.ExactEvmSchemeV1(account),
      );
      const before = await balances(devnet, account.address);

      const response = await release.fetch.wrapFetchWithPayment(fetch, client)(`${app.url}/v1`);

      expect(response.status).toBe(200);
      const receipt = decodeHeaderJson(response.headers.get('x-payment-response')!) as SettleResponse;
      expect(receipt).toMatchObject({ success: true, network: 'base', payer: account.address });
      expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
    },
  );

  it('accepts a v2 payload sent in X-PAYMENT on a v2 route and answers in X-PAYMENT-RESPONSE', async () => {
    const account = payerAccount(devnet, 1);
    const challenge = challengeOf(await fetch(`${app.url}/v2`));
    const payload = await createPaymentPayload({ paymentRequired: challenge, account });
    const before = await balances(devnet, account.address);

    const response = await sendPayment(`${app.url}/v2`, payload, 'X-PAYMENT');

    expect(response.status).toBe(200);
    const receipt = decodeHeaderJson(response.headers.get('x-payment-response')!) as SettleResponse;
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer: account.address });
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('refuses a v2 payload on a v1 route with payment_version_mismatch and charges nothing', async () => {
    const account = payerAccount(devnet, 3);
    const v2Challenge = challengeOf(await fetch(`${app.url}/v2`));
    const payload = await createPaymentPayload({ paymentRequired: v2Challenge, account });
    const before = await balances(devnet, account.address);

    const response = await sendPayment(`${app.url}/v1`, payload, 'X-PAYMENT');

    expect(response.status).toBe(402);
    expect(await errorCodeOf(response)).toBe('payment_version_mismatch');
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: 0n, received: 0n });
  });
});
