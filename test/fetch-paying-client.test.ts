// @tollbooth/fetch's paying client against Tollbooth servers on the devnet: spend limits,
// requirement selection, allowed assets, v1 challenges, and the 409 payment_in_progress retry with
// the same payload across two instances sharing one ledger, and the payment-identifier extension
// (one identifier per call, the same on the client's own retries and on a call the caller repeats
// with a new signature; read by the official extension's own helpers). Every test checks the balances.
import {
  createMemoryLedgerStore,
  decodeHeaderJson,
  encodeHeader,
  type PaymentOption,
  type PaymentPayload,
} from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import {
  createEvmPaymentSigner,
  createPayingClient,
  generatePaymentIdentifier,
  PaymentClientError,
  type PaymentSigner,
  readChallenge,
  readReceipt,
} from '@tollbooth/fetch';
import { extractPaymentIdentifier, validatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balances,
  deltas,
  devnetFacilitator,
  devnetPrice,
  errorCodeOf,
  type Listening,
  observed,
  PRICE,
  paidRoute,
  payerAccount,
  startTollboothApp,
} from './support/interop-harness';

/** A token address with no code on the devnet. */
const OTHER_ASSET = '0x00000000000000000000000000000000000a55e7';

let devnet: Devnet;
let app: Awaited<ReturnType<typeof startTollboothApp>>;
let facilitator: ReturnType<typeof observed>;
const servers: Listening[] = [];

function option(amount: bigint, asset?: string): PaymentOption {
  return {
    network: 'eip155:8453',
    payTo: devnet.accounts.payTo.address,
    price: { ...devnetPrice(devnet, amount), ...(asset ? { asset } : {}) },
  };
}

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 7 });
  facilitator = observed(devnetFacilitator(devnet));
  app = await startTollboothApp(devnet, {
    routes: {
      'GET /paid': paidRoute(devnet),
      'GET /paid-too': paidRoute(devnet),
      'GET /dear': paidRoute(devnet, { amount: 2n * PRICE }),
      'GET /v1': paidRoute(devnet, { x402Version: 1 }),
      'GET /wrong-name': paidRoute(devnet, { name: 'USDC' }),
      'GET /choice': { accepts: [option(3n * PRICE), option(PRICE), option(2n * PRICE)] },
      'GET /cheap-elsewhere': { accepts: [option(PRICE / 2n, OTHER_ASSET), option(PRICE)] },
      'GET /named': { ...paidRoute(devnet), paymentIdentifier: true },
      'GET /named-lost': { ...paidRoute(devnet), paymentIdentifier: true },
      'GET /named-again': { ...paidRoute(devnet), paymentIdentifier: true },
      'GET /named-off': { ...paidRoute(devnet), paymentIdentifier: true },
    },
    facilitator,
  });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await app?.close();
  await devnet?.stop();
});

function clientFor(payerIndex: number, options: Partial<Parameters<typeof createPayingClient>[0]> = {}) {
  const account = payerAccount(devnet, payerIndex);
  return {
    account,
    client: createPayingClient({
      signer: createEvmPaymentSigner({ account }),
      maxAmountPerPayment: 10n * PRICE,
      retryDelayMs: 20,
      ...options,
    }),
  };
}

const clientError = (code: string) => (error: unknown) =>
  error instanceof PaymentClientError && error.code === code;

describe('spend limits', () => {
  it('refuses a price above maxAmountPerPayment before signing, charging nothing', async () => {
    const { account, client } = clientFor(0, { maxAmountPerPayment: PRICE });
    const before = await balances(devnet, account.address);
    await expect(client.pay(`${app.url}/dear`)).rejects.toSatisfy(clientError('spend_limit_exceeded'));
    expect(client.spent).toBe(0n);
    expect(app.runs.get('/dear')).toBeUndefined();
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: 0n, received: 0n });
  });

  it('stops at maxTotal: the second payment that would exceed it is refused', async () => {
    const { account, client } = clientFor(0, { maxTotal: PRICE + PRICE / 2n });
    const before = await balances(devnet, account.address);
    expect((await client.fetch(`${app.url}/paid`)).status).toBe(200);
    expect(client.spent).toBe(PRICE);
    await expect(client.pay(`${app.url}/paid-too`)).rejects.toSatisfy(clientError('spend_limit_exceeded'));
    expect(client.spent).toBe(PRICE);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('does not count a payment the server refused with 402', async () => {
    const { account, client } = clientFor(1, { maxTotal: PRICE });
    const before = await balances(devnet, account.address);
    const refused = await client.pay(`${app.url}/wrong-name`);
    expect(refused.response.status).toBe(402);
    expect(await errorCodeOf(refused.response)).toBe('payment_verification_failed');
    expect(refused.attempts).toBe(1);
    expect(client.spent).toBe(0n);
    // The whole budget is still there.
    expect((await client.fetch(`${app.url}/paid`)).status).toBe(200);
    expect(client.spent).toBe(PRICE);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });
});

describe('choosing what to pay', () => {
  it('pays the cheapest payable requirement', async () => {
    const { account, client } = clientFor(1);
    const before = await balances(devnet, account.address);
    const { response, payload } = await client.pay(`${app.url}/choice`);
    expect(response.status).toBe(200);
    expect((payload as PaymentPayload).accepted.amount).toBe(PRICE.toString());
    expect(client.spent).toBe(PRICE);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('pays only allowedAssets (compared case-insensitively), even when another asset is cheaper', async () => {
    const { account, client } = clientFor(1, {
      allowedAssets: [{ network: 'eip155:8453', asset: devnet.token.address.toLowerCase() }],
    });
    const before = await balances(devnet, account.address);
    const { response, payload } = await client.pay(`${app.url}/cheap-elsewhere`);
    expect(response.status).toBe(200);
    expect((payload as PaymentPayload).accepted.asset).toBe(devnet.token.address);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('throws no_payable_requirement when nothing in the challenge is allowed, charging nothing', async () => {
    const { account, client } = clientFor(1, {
      allowedAssets: [{ network: 'eip155:84532', asset: devnet.token.address }],
    });
    const before = await balances(devnet, account.address);
    await expect(client.pay(`${app.url}/paid`)).rejects.toSatisfy(clientError('no_payable_requirement'));
    expect(client.spent).toBe(0n);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: 0n, received: 0n });
  });

  it('refuses a request that already carries a payment header', async () => {
    const { client } = clientFor(1);
    await expect(
      client.pay(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': 'e30=' } }),
    ).rejects.toSatisfy(clientError('payment_already_attempted'));
  });

  it('passes a free response through without paying', async () => {
    const { account, client } = clientFor(1);
    const before = await balances(devnet, account.address);
    const { response, attempts, payload } = await client.pay(`${app.url}/free`);
    expect(response.status).toBe(200);
    expect(attempts).toBe(0);
    expect(payload).toBeUndefined();
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: 0n, received: 0n });
  });
});

describe('challenges and receipts', () => {
  it('reads the challenge from the PAYMENT-REQUIRED header of a real 402', async () => {
    const response = await fetch(`${app.url}/paid`);
    const challenge = await readChallenge(response);
    expect(challenge).toMatchObject({
      x402Version: 2,
      resource: { url: `${app.url}/paid` },
      accepts: [{ amount: PRICE.toString(), asset: devnet.token.address }],
    });
  });

  it('reads a v1 challenge from the body and pays it with X-PAYMENT, reading X-PAYMENT-RESPONSE', async () => {
    const challenge = await readChallenge(await fetch(`${app.url}/v1`));
    expect(challenge).toMatchObject({ x402Version: 1, accepts: [{ network: 'base' }] });
    const { account, client } = clientFor(2);
    const before = await balances(devnet, account.address);
    const { response, receipt, payload } = await client.pay(`${app.url}/v1`);
    expect(response.status).toBe(200);
    expect(payload).toMatchObject({ x402Version: 1, scheme: 'exact', network: 'base' });
    expect(receipt).toMatchObject({ success: true, network: 'base', payer: account.address });
    expect(receipt?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(decodeHeaderJson(response.headers.get('x-payment-response') ?? '')).toEqual(receipt);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('readReceipt decodes PAYMENT-RESPONSE of a paid response and gives undefined without one', async () => {
    const { account, client } = clientFor(2);
    const before = await balances(devnet, account.address);
    const response = await client.fetch(`${app.url}/paid-too`);
    expect(response.status).toBe(200);
    const receipt = readReceipt(response);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer: account.address });
    const tx = await devnet.publicClient.getTransactionReceipt({ hash: receipt!.transaction as Hex });
    expect(tx.status).toBe('success');
    expect(readReceipt(await fetch(`${app.url}/free`))).toBeUndefined();
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });
});

describe('a payment in progress on another instance', () => {
  it('retries 409 payment_in_progress with the same payload until the first instance has settled it', async () => {
    // Two instances share one ledger; a load balancer that, like nginx's proxy_next_upstream on a
    // timeout, re-sends the paid request to the second instance while the first is still busy.
    const ledger = createMemoryLedgerStore();
    const shared = {
      routes: { 'GET /slow': paidRoute(devnet) },
      facilitator,
      ledger,
      baseUrl: 'http://api.test',
    };
    // The first instance's handler runs (its claim taken) until the second has answered 409.
    let handlerRunning!: () => void;
    const running = new Promise<void>((resolve) => {
      handlerRunning = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = await startTollboothApp(devnet, {
      ...shared,
      holdSlow: () => {
        handlerRunning();
        return released;
      },
    });
    const second = await startTollboothApp(devnet, { ...shared, inFlightWaitMs: 100, pollIntervalMs: 20 });
    servers.push(first, second);
    const account = payerAccount(devnet, 3);
    const evm = createEvmPaymentSigner({ account });
    let signed = 0;
    const signer: PaymentSigner = {
      supports: evm.supports,
      createPayload: (challenge, requirement) => {
        signed += 1;
        return evm.createPayload(challenge, requirement);
      },
    };
    const headers: string[] = [];
    const statuses: number[] = [];
    let firstInstance: Promise<Response> | undefined;
    const balancer: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const payment = request.headers.get('payment-signature');
      const path = new URL(request.url).pathname;
      if (payment) headers.push(payment);
      if (payment && !firstInstance) {
        firstInstance = fetch(`${first.url}${path}`, { headers: request.headers });
        await running;
      }
      const response = await fetch(`${payment ? second.url : first.url}${path}`, {
        headers: request.headers,
      });
      statuses.push(response.status);
      if (response.status === 409 && statuses.filter((s) => s === 409).length === 1) {
        // The client retries once the first instance has finished: its retry finds the stored answer.
        release();
        await firstInstance;
      }
      return response;
    };
    const client = createPayingClient({
      signer,
      maxAmountPerPayment: PRICE,
      fetch: balancer,
      maxRetries: 12,
      retryDelayMs: 50,
      maxRetryDelayMs: 200,
    });
    const before = await balances(devnet, account.address);

    const { response, attempts } = await client.pay('http://api.test/slow');

    expect(statuses[0]).toBe(402);
    expect(statuses).toContain(409);
    expect(statuses.at(-1)).toBe(200);
    expect(response.status).toBe(200);
    expect(attempts).toBe(statuses.length - 1);
    expect(signed).toBe(1);
    expect(new Set(headers).size).toBe(1);
    const original = await firstInstance!;
    expect(original.status).toBe(200);
    // The second instance replays what the first one stored; its handler never ran.
    expect(await response.text()).toBe(await original.text());
    expect(response.headers.get('payment-response')).toBe(original.headers.get('payment-response'));
    expect(first.runs.get('/slow')).toBe(1);
    expect(second.runs.get('/slow')).toBeUndefined();
    expect(client.spent).toBe(PRICE);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });
});

/** The payment-identifier extension's object in a payload, decoded from its header. */
function identifierIn(header: string): { info: { required: boolean; id?: string } } | undefined {
  const payload = decodeHeaderJson(header) as PaymentPayload;
  return payload.extensions?.['payment-identifier'] as { info: { required: boolean; id?: string } };
}

/** A fetch that sends every request on, and loses the answers to the first `lose` paid ones. */
function losingFetch(lose: number) {
  const sent: string[] = [];
  const answered: number[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const payment = request.headers.get('payment-signature');
    const response = await fetch(request);
    if (!payment) return response;
    sent.push(payment);
    answered.push(response.status);
    // The server has answered (and settled); the client never sees it.
    if (sent.length <= lose) throw new TypeError('fetch failed: the connection was reset');
    return response;
  };
  return { fetch: wrapped, sent, answered };
}

describe('payment identifiers', () => {
  it('names the payment when the challenge advertises the extension, as the official helpers read it', async () => {
    const { account, client } = clientFor(4);
    const before = await balances(devnet, account.address);
    const { response, payload, paymentIdentifier } = await client.pay(`${app.url}/named`);
    expect(response.status).toBe(200);
    expect(paymentIdentifier).toMatch(/^pay_[0-9a-f]{32}$/);
    const sent = payload as PaymentPayload;
    // The challenge's declaration echoed with the id added, as @x402/extensions' clients send it.
    expect(sent.extensions?.['payment-identifier']).toMatchObject({
      info: { required: false, id: paymentIdentifier },
      schema: { required: ['required'] },
    });
    expect(validatePaymentIdentifier(sent.extensions?.['payment-identifier'])).toEqual({ valid: true });
    expect(extractPaymentIdentifier(sent as Parameters<typeof extractPaymentIdentifier>[0])).toBe(
      paymentIdentifier,
    );
    // A route that does not advertise it gets no identifier.
    const plain = await client.pay(`${app.url}/paid`);
    expect(plain.response.status).toBe(200);
    expect(plain.paymentIdentifier).toBeUndefined();
    expect((plain.payload as PaymentPayload).extensions?.['payment-identifier']).toBeUndefined();
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: 2n * PRICE, received: 2n * PRICE });
  });

  it('keeps the identifier on its own retries: a lost answer and the retry are charged once', async () => {
    const account = payerAccount(devnet, 5);
    const losing = losingFetch(2);
    const client = createPayingClient({
      signer: createEvmPaymentSigner({ account }),
      maxAmountPerPayment: PRICE,
      fetch: losing.fetch,
      retryDelayMs: 10,
    });
    const before = await balances(devnet, account.address);
    const { response, paymentIdentifier, attempts } = await client.pay(`${app.url}/named-lost`);
    expect(response.status).toBe(200);
    expect(attempts).toBe(3);
    expect(losing.answered).toEqual([200, 200, 200]);
    expect(losing.sent.map((header) => identifierIn(header)?.info.id)).toEqual([
      paymentIdentifier,
      paymentIdentifier,
      paymentIdentifier,
    ]);
    expect(await response.json()).toMatchObject({ path: '/named-lost', run: 1 });
    expect(app.runs.get('/named-lost')).toBe(1);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('answers a call the caller repeats under its identifier from the first payment, with a new signature', async () => {
    const account = payerAccount(devnet, 6);
    // Every answer to the first call is lost, and the client gives up after one retry.
    const losing = losingFetch(2);
    const client = createPayingClient({
      signer: createEvmPaymentSigner({ account }),
      maxAmountPerPayment: PRICE,
      fetch: losing.fetch,
      maxRetries: 1,
      retryDelayMs: 10,
    });
    const before = await balances(devnet, account.address);
    const id = generatePaymentIdentifier('order_');
    const url = `${app.url}/named-again`;
    await expect(client.pay(url, undefined, { paymentIdentifier: id })).rejects.toThrow(
      /connection was reset/,
    );
    expect(losing.answered).toEqual([200, 200]);

    const again = await client.pay(url, undefined, { paymentIdentifier: id });
    expect(again.response.status).toBe(200);
    expect(again.paymentIdentifier).toBe(id);
    expect(await again.response.json()).toMatchObject({ path: '/named-again', run: 1 });
    // A new authorization (the first one's nonce is spent), the same identifier.
    expect(new Set(losing.sent).size).toBe(2);
    expect(losing.sent.map((header) => identifierIn(header)?.info.id)).toEqual([id, id, id]);
    expect(app.runs.get('/named-again')).toBe(1);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('sends no identifier when the client or the call turns it off, and refuses a malformed one before any request', async () => {
    const { account, client } = clientFor(4, { paymentIdentifier: false });
    const before = await balances(devnet, account.address);
    const off = await client.pay(`${app.url}/named-off`);
    expect(off.response.status).toBe(200);
    expect(off.paymentIdentifier).toBeUndefined();
    expect(identifierIn(encodeHeader(off.payload!))?.info.id).toBeUndefined();
    // The call's own identifier is sent even so.
    const named = await client.pay(`${app.url}/named-off`, undefined, {
      paymentIdentifier: 'pay_0123456789abcdef',
    });
    expect(named.paymentIdentifier).toBe('pay_0123456789abcdef');
    const { client: on } = clientFor(4);
    const callOff = await on.pay(`${app.url}/named-off`, undefined, { paymentIdentifier: false });
    expect(callOff.paymentIdentifier).toBeUndefined();
    expect(app.runs.get('/named-off')).toBe(3);

    await expect(on.pay(`${app.url}/named-off`, undefined, { paymentIdentifier: 'short' })).rejects.toSatisfy(
      clientError('invalid_payment_identifier'),
    );
    await expect(
      on.pay(`${app.url}/named-off`, undefined, { paymentIdentifier: 'pay_0123456789abcdef!' }),
    ).rejects.toSatisfy(clientError('invalid_payment_identifier'));
    expect(app.runs.get('/named-off')).toBe(3);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: 3n * PRICE, received: 3n * PRICE });
  });
});
