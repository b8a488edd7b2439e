// The paying client's own logic against a scripted HTTP server on loopback (no chain needed: the
// signer signs locally). Payments on a real chain are in test/fetch-*.test.ts.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeHeaderJson,
  encodeHeader,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequiredV1,
  type SettleResponse,
} from '@tollbooth/core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEvmPaymentSigner } from './evm-signer';
import {
  createPayingClient,
  PaymentClientError,
  type PaymentSigner,
  readChallenge,
  readReceipt,
} from './paying-fetch';

const account = privateKeyToAccount(generatePrivateKey());
const ASSET = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

function requirement(amount: string) {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount,
    asset: ASSET,
    payTo: PAY_TO,
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2' },
  };
}

const challenge: PaymentRequired = {
  x402Version: 2,
  resource: { url: 'http://127.0.0.1/paid' },
  accepts: [requirement('1000')],
};
const v1Challenge: PaymentRequiredV1 = {
  x402Version: 1,
  error: 'payment_required',
  accepts: [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '1000',
      resource: 'http://127.0.0.1/paid',
      description: '',
      mimeType: 'application/json',
      payTo: PAY_TO,
      maxTimeoutSeconds: 60,
      asset: ASSET,
      extra: { name: 'USD Coin', version: '2' },
    },
  ],
};
const receipt: SettleResponse = {
  success: true,
  transaction: `0x${'ab'.repeat(32)}`,
  network: 'eip155:8453',
  payer: account.address,
};

type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang-up';

/** A loopback server answering each request with the next scripted reply; records what it got. */
let server: Server;
let url: string;
let script: Reply[] = [];
let seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    const reply = script.shift() ?? { status: 500, body: { error: 'script exhausted' } };
    if (reply === 'hang-up') {
      req.socket.destroy();
      return;
    }
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/paid`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  script = [];
  seen = [];
});

const paymentRequired402 = (c: PaymentRequired = challenge): Reply => ({
  status: 402,
  headers: { 'payment-required': encodeHeader(c) },
  body: c,
});
const ok: Reply = { status: 200, headers: { 'payment-response': encodeHeader(receipt) }, body: { ok: true } };
const uncertain: Reply = {
  status: 502,
  body: {
    error: {
      code: 'settlement_uncertain',
      message: 'unknown',
      request_id: 'r',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
    },
  },
};
const inProgress: Reply = {
  status: 409,
  body: {
    error: {
      code: 'payment_in_progress',
      message: 'busy',
      request_id: 'r',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
    },
  },
};

function client(options: Partial<Parameters<typeof createPayingClient>[0]> = {}) {
  return createPayingClient({
    signer: createEvmPaymentSigner({ account }),
    maxAmountPerPayment: 10_000n,
    retryDelayMs: 5,
    ...options,
  });
}

const paymentHeaders = () =>
  seen.map((h) => h['payment-signature']).filter((h): h is string => typeof h === 'string');

describe('createPayingClient', () => {
  it('pays a 402 once and returns the decoded receipt', async () => {
    script = [paymentRequired402(), ok];
    const paying = client();
    const result = await paying.pay(url);
    expect(result.response.status).toBe(200);
    expect(result.receipt).toEqual(receipt);
    expect(result.attempts).toBe(1);
    const sent = decodeHeaderJson(paymentHeaders()[0]!) as PaymentPayload;
    expect(sent.accepted).toEqual(challenge.accepts[0]);
    expect(sent.resource).toEqual(challenge.resource);
    expect(paying.spent).toBe(1000n);
  });

  it('retries the exact same payload after a 502 retry_exact_payment_payload and a 409 payment_in_progress', async () => {
    script = [paymentRequired402(), uncertain, inProgress, ok];
    const result = await client().pay(url);
    expect(result.response.status).toBe(200);
    expect(result.attempts).toBe(3);
    expect(paymentHeaders()).toHaveLength(3);
    expect(new Set(paymentHeaders()).size).toBe(1);
  });

  it('honours Retry-After up to maxRetryDelayMs', async () => {
    script = [paymentRequired402(), { ...inProgress, headers: { 'retry-after': '30' } }, ok];
    const started = Date.now();
    const result = await client({ maxRetryDelayMs: 50 }).pay(url);
    expect(result.response.status).toBe(200);
    expect(result.attempts).toBe(2);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('retries the same payload after the connection drops', async () => {
    script = [paymentRequired402(), 'hang-up', ok];
    const result = await client().pay(url);
    expect(result.response.status).toBe(200);
    expect(new Set(paymentHeaders()).size).toBe(1);
    expect(paymentHeaders()).toHaveLength(2);
  });

  it('gives up after maxRetries, returns the 502 and keeps the amount counted', async () => {
    script = [paymentRequired402(), uncertain, uncertain, uncertain];
    const paying = client({ maxRetries: 2 });
    const result = await paying.pay(url);
    expect(result.response.status).toBe(502);
    expect(result.attempts).toBe(3);
    expect(paying.spent).toBe(1000n);
  });

  it('does not retry a 502 without the retry instruction', async () => {
    script = [paymentRequired402(), { status: 502, body: { error: { code: 'facilitator_error' } } }, ok];
    const result = await client().pay(url);
    expect(result.response.status).toBe(502);
    expect(result.attempts).toBe(1);
    expect(script).toEqual([ok]);
  });

  it('gives back the amount of a payment refused with 402', async () => {
    script = [paymentRequired402(), paymentRequired402()];
    const paying = client();
    const result = await paying.pay(url);
    expect(result.response.status).toBe(402);
    expect(paying.spent).toBe(0n);
  });

  it('selects the cheapest requirement by default, or what `select` picks', async () => {
    const three = { ...challenge, accepts: [requirement('3000'), requirement('1000'), requirement('2000')] };
    script = [paymentRequired402(three), ok];
    await client().pay(url);
    expect((decodeHeaderJson(paymentHeaders()[0]!) as PaymentPayload).accepted.amount).toBe('1000');

    seen = [];
    script = [paymentRequired402(three), ok];
    await client({ select: (candidates) => candidates.at(-1)! }).pay(url);
    expect((decodeHeaderJson(paymentHeaders()[0]!) as PaymentPayload).accepted.amount).toBe('2000');
  });

  it('skips requirements above the per-payment limit when a cheaper one fits', async () => {
    script = [paymentRequired402({ ...challenge, accepts: [requirement('5000'), requirement('20000')] }), ok];
    const paying = client({ maxAmountPerPayment: 5000n, select: (c) => c.at(-1)! });
    await paying.pay(url);
    expect((decodeHeaderJson(paymentHeaders()[0]!) as PaymentPayload).accepted.amount).toBe('5000');
  });

  it('throws no_payable_requirement for a challenge it cannot sign, sending no payment', async () => {
    script = [paymentRequired402({ ...challenge, accepts: [{ ...requirement('1'), scheme: 'upto' }] })];
    await expect(client().pay(url)).rejects.toSatisfy(
      (e) => e instanceof PaymentClientError && e.code === 'no_payable_requirement',
    );
    expect(paymentHeaders()).toHaveLength(0);
  });

  it('pays a v1 body challenge with X-PAYMENT', async () => {
    script = [{ status: 402, body: v1Challenge }, ok];
    const result = await client().pay(url);
    expect(result.response.status).toBe(200);
    expect(seen[1]?.['payment-signature']).toBeUndefined();
    const sent = decodeHeaderJson(seen[1]!['x-payment'] as string);
    expect(sent).toMatchObject({ x402Version: 1, scheme: 'exact', network: 'base' });
  });

  it('never pays twice when several payments race for the last of maxTotal', async () => {
    script = [paymentRequired402(), paymentRequired402(), ok, ok];
    // A signer that takes its time (a hardware wallet, a remote signer): both calls sign at once.
    const evm = createEvmPaymentSigner({ account });
    const slow: PaymentSigner = {
      supports: evm.supports,
      createPayload: async (c, r) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return evm.createPayload(c, r);
      },
    };
    const paying = client({ signer: slow, maxTotal: 1500n });
    const results = await Promise.allSettled([paying.pay(url), paying.pay(url)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([
      { status: 'rejected', reason: expect.objectContaining({ code: 'spend_limit_exceeded' }) },
    ]);
    expect(paying.spent).toBe(1000n);
    expect(paymentHeaders()).toHaveLength(1);
  });
});

describe('readChallenge', () => {
  it('reads the PAYMENT-REQUIRED header, preferring it over the body', async () => {
    const response = new Response(JSON.stringify(v1Challenge), {
      status: 402,
      headers: { 'PAYMENT-REQUIRED': encodeHeader(challenge) },
    });
    expect(await readChallenge(response)).toEqual(challenge);
  });

  it('reads a v1 challenge from the body', async () => {
    expect(await readChallenge(new Response(JSON.stringify(v1Challenge), { status: 402 }))).toEqual(
      v1Challenge,
    );
  });

  it.each([
    ['a header that is not base64 JSON', { 'payment-required': '%%%' }, '{}'],
    ['a header that is not a challenge', { 'payment-required': encodeHeader({ x402Version: 2 }) }, '{}'],
    ['no header and a v2 body', {}, JSON.stringify(challenge)],
    ['no header and no JSON body', {}, 'Payment Required'],
  ])('throws invalid_challenge for %s', async (_label, headers, body) => {
    await expect(readChallenge(new Response(body, { status: 402, headers }))).rejects.toSatisfy(
      (e) => e instanceof PaymentClientError && e.code === 'invalid_challenge',
    );
  });
});

describe('readReceipt', () => {
  it('decodes PAYMENT-RESPONSE and X-PAYMENT-RESPONSE', () => {
    expect(readReceipt(new Response('', { headers: { 'PAYMENT-RESPONSE': encodeHeader(receipt) } }))).toEqual(
      receipt,
    );
    expect(
      readReceipt(new Response('', { headers: { 'X-PAYMENT-RESPONSE': encodeHeader(receipt) } })),
    ).toEqual(receipt);
  });

  it('gives undefined without a receipt or for one that does not decode', () => {
    expect(readReceipt(new Response(''))).toBeUndefined();
    expect(readReceipt(new Response('', { headers: { 'payment-response': 'not base64!' } }))).toBeUndefined();
    expect(
      readReceipt(new Response('', { headers: { 'payment-response': encodeHeader({ success: 'yes' }) } })),
    ).toBeUndefined();
  });
});
