// Payments Tollbooth must refuse, on a real chain: each answers 402 with the right code and a
// fresh challenge, runs no handler and moves no money. A settled payment retried for the same
// resource within its window is replayed byte for byte and charged once.
import type { PaymentPayload, PaymentRequirements } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import type { LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  requirementOf,
  sendPayment,
  startTollboothApp,
} from './support/interop-harness';

let devnet: Devnet;
let app: Awaited<ReturnType<typeof startTollboothApp>>;
let facilitator: ReturnType<typeof observed>;
/** Shifts the gate's clock (ms); the chain and the facilitator keep real time. */
let skewMs = 0;
const rejected: Array<{ code: string; message: string }> = [];

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 2 });
  facilitator = observed(devnetFacilitator(devnet));
  app = await startTollboothApp(devnet, {
    routes: {
      'GET /a': paidRoute(devnet),
      'GET /b': paidRoute(devnet),
      // A server whose challenge names the token's EIP-712 domain wrongly.
      'GET /wrong-name': paidRoute(devnet, { name: 'USDC' }),
    },
    facilitator,
    now: () => Date.now() + skewMs,
    hooks: { onRejected: (_id, code, message) => void rejected.push({ code, message }) },
  });
});

afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

async function payFor(path: string, account: LocalAccount, now?: number): Promise<PaymentPayload> {
  const paymentRequired = challengeOf(await fetch(`${app.url}${path}`));
  return createPaymentPayload({ paymentRequired, account, now });
}

/** Sends `payload` and checks the refusal: 402, `code`, a fresh challenge, no handler, no money moved. */
async function expectRefused(path: string, payload: PaymentPayload, payer: `0x${string}`, code: string) {
  const before = await balances(devnet, payer);
  const runsBefore = app.runs.get(path) ?? 0;
  const settlesBefore = facilitator.settles;
  const response = await sendPayment(`${app.url}${path}`, payload);
  expect(response.status).toBe(402);
  expect(await errorCodeOf(response)).toBe(code);
  expect(challengeOf(response).accepts).toHaveLength(1);
  expect(app.runs.get(path) ?? 0).toBe(runsBefore);
  expect(facilitator.settles).toBe(settlesBefore);
  expect(await deltas(devnet, payer, before)).toEqual({ paid: 0n, received: 0n });
  return response;
}

describe('replays', () => {
  let payload: PaymentPayload;
  let first: { status: number; body: string; receipt: string | null };
  const payer = () => payerAccount(devnet, 0);

  beforeAll(async () => {
    payload = await payFor('/a', payer());
    const before = await balances(devnet, payer().address);
    const response = await sendPayment(`${app.url}/a`, payload);
    first = {
      status: response.status,
      body: await response.text(),
      receipt: response.headers.get('payment-response'),
    };
    expect(first.status).toBe(200);
    expect(await deltas(devnet, payer().address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('replays the stored response byte for byte for the same resource within the window, without a second charge', async () => {
    const before = await balances(devnet, payer().address);
    const settlesBefore = facilitator.settles;
    const response = await sendPayment(`${app.url}/a`, payload);
    expect(response.status).toBe(first.status);
    expect(await response.text()).toBe(first.body);
    expect(response.headers.get('payment-response')).toBe(first.receipt);
    expect(app.runs.get('/a')).toBe(1);
    expect(facilitator.settles).toBe(settlesBefore);
    expect(await deltas(devnet, payer().address, before)).toEqual({ paid: 0n, received: 0n });
  });

  it('refuses a settled payment sent to another resource with payment_already_used, before and after a replay', async () => {
    // A payment of its own, so that what the gate holds does not depend on the tests before.
    const own = await payFor('/a', payer());
    expect((await sendPayment(`${app.url}/a`, own)).status).toBe(200);
    // Same price and recipient, so `accepted` matches /b too: only the ledger knows better.
    await expectRefused('/b', own, payer().address, 'payment_already_used');
    // Replayed for /a, its answer is kept beside the header text: /b is still refused.
    expect((await sendPayment(`${app.url}/a`, own)).status).toBe(200);
    await expectRefused('/b', own, payer().address, 'payment_already_used');
  });

  // The scheme refuses the expired authorization locally; the gate asks the ledger first.
  it('refuses a settled payment replayed after its window with payment_already_used', async () => {
    skewMs = 120_000;
    try {
      await expectRefused('/a', payload, payer().address, 'payment_already_used');
    } finally {
      skewMs = 0;
    }
  });
});

describe('refusals', () => {
  it('refuses an authorization signed for less than the price with payment_amount_mismatch', async () => {
    const account = payerAccount(devnet, 1);
    const paymentRequired = challengeOf(await fetch(`${app.url}/a`));
    const real = requirementOf(paymentRequired);
    const cheap: PaymentRequirements = { ...real, amount: '1' };
    const signed = await createPaymentPayload({
      paymentRequired: { ...paymentRequired, accepts: [cheap] },
      account,
    });
    // The signature is genuine; only `accepted` claims the real price.
    await expectRefused('/a', { ...signed, accepted: real }, account.address, 'payment_amount_mismatch');
  });

  it('refuses an amount tampered after signing with payment_signature_invalid', async () => {
    const account = payerAccount(devnet, 1);
    const signed = await payFor('/a', account);
    const payload = signed.payload as { authorization: Record<string, string> };
    const tampered = {
      ...signed,
      payload: { ...payload, authorization: { ...payload.authorization, value: '1' } },
      accepted: { ...signed.accepted, amount: '1' },
    };
    // `accepted.amount` no longer matches the route either: the route check answers first.
    await expectRefused('/a', tampered, account.address, 'payment_amount_mismatch');
    await expectRefused(
      '/a',
      { ...tampered, accepted: signed.accepted },
      account.address,
      'payment_signature_invalid',
    );
  });

  it("refuses a payment signed under a wrong EIP-712 name in the route's challenge (the facilitator's verdict)", async () => {
    const account = payerAccount(devnet, 1);
    const payload = await payFor('/wrong-name', account);
    rejected.length = 0;
    await expectRefused('/wrong-name', payload, account.address, 'payment_verification_failed');
    expect(rejected).toEqual([
      { code: 'payment_verification_failed', message: expect.stringMatching(/name|signature/i) },
    ]);
  });

  it('refuses a payment signed under a wrong EIP-712 name against the right challenge with payment_signature_invalid', async () => {
    const account = payerAccount(devnet, 1);
    const paymentRequired = challengeOf(await fetch(`${app.url}/a`));
    const real = requirementOf(paymentRequired);
    const signed = await createPaymentPayload({
      paymentRequired: { ...paymentRequired, accepts: [{ ...real, extra: { ...real.extra, name: 'USDC' } }] },
      account,
    });
    await expectRefused('/a', { ...signed, accepted: real }, account.address, 'payment_signature_invalid');
  });

  it('refuses a payer without the balance with payment_insufficient_funds', async () => {
    const broke = privateKeyToAccount(generatePrivateKey());
    const payload = await payFor('/a', broke);
    await expectRefused('/a', payload, broke.address, 'payment_insufficient_funds');
  });

  it('refuses an expired authorization with payment_expired', async () => {
    const account = payerAccount(devnet, 1);
    const payload = await payFor('/a', account, Math.floor(Date.now() / 1000) - 3600);
    await expectRefused('/a', payload, account.address, 'payment_expired');
  });
});
