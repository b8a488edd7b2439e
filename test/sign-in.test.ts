// Sign-in-with-x on a real chain (docs/sign-in-with-x.md): the official x402 client
// (@x402/fetch's wrapFetchWithPayment around @x402/extensions' wrapFetchWithSIWx) pays a route
// once and comes back by signing, on Express, Fastify and Koa; every refusal the issue lists.
import {
  createMemoryLedgerStore,
  decodeHeaderJson,
  encodeHeader,
  type PaymentRequired,
  SIGN_IN_EXTENSION,
} from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createEvmPaymentSigner, createPayingClient } from '@tollbooth/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balances,
  challengeOf,
  deltas,
  devnetFacilitator,
  errorCodeOf,
  FRAMEWORKS,
  type Listening,
  observed,
  PRICE,
  paidRoute,
  payerAccount,
} from './support/interop-harness';
import { officialProof, startSignInServer } from './support/sign-in-servers';

describe('sign-in-with-x with the official client on the devnet', () => {
  let devnet: Devnet;
  const servers: Listening[] = [];

  beforeAll(async () => {
    devnet = await startDevnet({ chainId: 8453, payers: 6 });
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await devnet?.stop();
  });

  /** The official paying client that tries sign-in first (the SIWX wrapper inside the paying one). */
  function officialClient(payerIndex: number) {
    const account = payerAccount(devnet, payerIndex);
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
    return wrapFetchWithPayment(wrapFetchWithSIWx(fetch, account), client);
  }

  async function server(framework: (typeof FRAMEWORKS)[number], clock?: () => number) {
    const facilitator = observed(devnetFacilitator(devnet));
    const app = await startSignInServer(framework, devnet, {
      facilitator,
      ledger: createMemoryLedgerStore(),
      ...(clock ? { now: clock } : {}),
      routes: {
        'GET /pass': { ...paidRoute(devnet), signIn: { passSeconds: 600 } },
        'POST /pass': { ...paidRoute(devnet), signIn: { passSeconds: 600 } },
        'GET /five': { ...paidRoute(devnet), signIn: { uses: 5 } },
        'GET /cheap': { ...paidRoute(devnet), signIn: { passSeconds: 600 } },
        'GET /dear': { ...paidRoute(devnet, { amount: 5n * PRICE }), signIn: { passSeconds: 600 } },
        'GET /plain': paidRoute(devnet),
      },
    });
    servers.push(app);
    return { app, facilitator };
  }

  it.each(FRAMEWORKS)(
    'on %s, pays once, then comes back five times by signing: one transfer, six answers',
    async (framework) => {
      const { app, facilitator } = await server(framework);
      const payer = payerAccount(devnet, 0).address;
      const before = await balances(devnet, payer);
      const pay = officialClient(0);
      for (let i = 1; i <= 6; i++) {
        const response = await pay(`${app.url}/five`);
        expect(response.status, `request ${i}`).toBe(200);
        expect(await response.json()).toMatchObject({ ok: true, path: '/five', run: i });
        expect(response.headers.has('payment-response'), `request ${i} settled`).toBe(i === 1);
      }
      expect(facilitator.settles).toBe(1);
      expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
      // The five uses are spent: the next request pays again (a second transfer).
      const sixth = await pay(`${app.url}/five`);
      expect(sixth.status).toBe(200);
      expect(sixth.headers.has('payment-response')).toBe(true);
      expect(facilitator.settles).toBe(2);
    },
  );

  it('declares the extension from the configured public URL, never Host, within the head budget', async () => {
    const { app } = await server('express');
    const response = await fetch(`${app.url}/pass`, { headers: { host: 'evil.example' } });
    expect(response.status).toBe(402);
    const challenge = challengeOf(response);
    const offer = challenge.extensions?.[SIGN_IN_EXTENSION] as {
      info: Record<string, string>;
      supportedChains: unknown[];
      schema?: unknown;
    };
    const host = new URL(app.url).host;
    expect(offer.info).toMatchObject({ domain: host, uri: `${app.url}/pass`, version: '1' });
    expect(offer.info['nonce']).toMatch(/^[0-9a-f]{60}$/);
    expect(Date.parse(offer.info['expirationTime']!)).toBeGreaterThan(Date.parse(offer.info['issuedAt']!));
    expect(offer.supportedChains).toEqual([{ chainId: 'eip155:8453', type: 'eip191' }]);
    expect(offer.schema).toBeUndefined();
    const body = (await response.json()) as PaymentRequired;
    const bodyOffer = body.extensions![SIGN_IN_EXTENSION] as { schema?: unknown };
    expect(bodyOffer.schema).toBeDefined();
    const head = [...response.headers].reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
    expect(head).toBeLessThan(4096);
    const again = challengeOf(await fetch(`${app.url}/pass`));
    const againOffer = again.extensions![SIGN_IN_EXTENSION] as typeof offer;
    expect(againOffer.info['nonce']).not.toBe(offer.info['nonce']);
  });

  describe('refusals', () => {
    let app: Listening & { runs: Map<string, number> };
    let facilitator: ReturnType<typeof observed>;
    beforeAll(async () => {
      ({ app, facilitator } = await server('express'));
      // Payer 1 buys the pass of GET /pass and of GET /cheap (claiming GET /dear's resource URL).
      const paid = await officialClient(1)(`${app.url}/pass`);
      expect(paid.status).toBe(200);
      const client = new x402Client().register('eip155:*', new ExactEvmScheme(payerAccount(devnet, 1)));
      const challenge = challengeOf(await fetch(`${app.url}/cheap`));
      const payload = await client.createPaymentPayload(challenge as never);
      const forged = { ...payload, resource: { ...payload.resource, url: `${app.url}/dear` } };
      const cheap = await fetch(`${app.url}/cheap`, {
        headers: { 'PAYMENT-SIGNATURE': encodeHeader(forged) },
      });
      expect(cheap.status).toBe(200);
      expect(facilitator.settles).toBe(2);
    });

    async function signedRequest(
      path: string,
      init: RequestInit = {},
      change?: (info: Record<string, unknown>) => void,
    ) {
      const challenge = challengeOf(await fetch(`${app.url}${path}`, init));
      const proof = await officialProof(challenge, payerAccount(devnet, 1), `${app.url}${path}`, change);
      return {
        proof,
        send: () => fetch(`${app.url}${path}`, { ...init, headers: { 'SIGN-IN-WITH-X': proof } }),
      };
    }

    it('serves a proof once; its replay is refused sign_in_nonce_used with a fresh challenge', async () => {
      const { send } = await signedRequest('/pass');
      expect((await send()).status).toBe(200);
      const replay = await send();
      expect(replay.status).toBe(402);
      expect(await errorCodeOf(replay)).toBe('sign_in_nonce_used');
      expect(challengeOf(replay).extensions?.[SIGN_IN_EXTENSION]).toBeDefined();
    });

    it('refuses a nonce this server never issued (sign_in_nonce_unknown)', async () => {
      const { send } = await signedRequest('/pass', {}, (info) => {
        info['nonce'] = `${'0'.repeat(28)}${'f'.repeat(32)}`;
      });
      const response = await send();
      expect(response.status).toBe(402);
      expect(await errorCodeOf(response)).toBe('sign_in_nonce_unknown');
    });

    it('serves one of ten concurrent requests carrying one proof', async () => {
      const { send } = await signedRequest('/pass');
      const before = app.runs.get('GET /pass') ?? 0;
      const answers = await Promise.all(Array.from({ length: 10 }, () => send()));
      expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(402)]);
      expect(app.runs.get('GET /pass')).toBe(before + 1);
    });

    it('does not open GET /dear with access bought on GET /cheap, whatever resource.url claimed', async () => {
      expect((await (await signedRequest('/cheap')).send()).status).toBe(200);
      const dear = await (await signedRequest('/dear')).send();
      expect(dear.status).toBe(402);
      expect(await errorCodeOf(dear)).toBe('sign_in_no_access');
    });

    it('does not open POST /pass with access bought by GET /pass', async () => {
      const response = await (await signedRequest('/pass', { method: 'POST' })).send();
      expect(response.status).toBe(402);
      expect(await errorCodeOf(response)).toBe('sign_in_no_access');
    });

    it('refuses a proof naming another domain (sign_in_domain_mismatch)', async () => {
      const { send } = await signedRequest('/pass');
      const proof = decodeHeaderJson((await signedRequest('/pass')).proof) as Record<string, unknown>;
      const response = await fetch(`${app.url}/pass`, {
        headers: { 'SIGN-IN-WITH-X': encodeHeader({ ...proof, domain: 'evil.example' }) },
      });
      expect(response.status).toBe(402);
      expect(await errorCodeOf(response)).toBe('sign_in_domain_mismatch');
      expect((await send()).status).toBe(200);
    });

    it('refuses a proof another key signed (sign_in_signature_invalid)', async () => {
      const proof = decodeHeaderJson((await signedRequest('/pass')).proof) as Record<string, unknown>;
      const response = await fetch(`${app.url}/pass`, {
        headers: { 'SIGN-IN-WITH-X': encodeHeader({ ...proof, address: payerAccount(devnet, 2).address }) },
      });
      expect(response.status).toBe(402);
      expect(await errorCodeOf(response)).toBe('sign_in_signature_invalid');
    });

    it.each([
      ['not base64!', 'sign_in_proof_invalid_base64'],
      [Buffer.from('{nope').toString('base64'), 'sign_in_proof_invalid_json'],
      [encodeHeader({ domain: 'x' }), 'sign_in_proof_invalid'],
    ])('answers a malformed proof %j with 400 %s and the challenge', async (header, code) => {
      const response = await fetch(`${app.url}/pass`, { headers: { 'SIGN-IN-WITH-X': header } });
      expect(response.status).toBe(400);
      expect(await errorCodeOf(response)).toBe(code);
      expect(response.headers.get('payment-required')).toBeTruthy();
    });

    it('ignores a proof at a route without sign-in (the plain challenge)', async () => {
      const { proof } = await signedRequest('/pass');
      const response = await fetch(`${app.url}/plain`, { headers: { 'SIGN-IN-WITH-X': proof } });
      expect(response.status).toBe(402);
      expect(await errorCodeOf(response)).toBe('payment_required');
    });
  });

  it('@tollbooth/fetch signs in where it paid, pays where it did not, and pays again when the uses run out', async () => {
    const { app, facilitator } = await server('fastify');
    const account = payerAccount(devnet, 4);
    const client = createPayingClient({
      signer: createEvmPaymentSigner({ account }),
      maxAmountPerPayment: 10_000n,
    });
    const before = await balances(devnet, account.address);
    const paid = await client.pay(`${app.url}/five`);
    expect(paid).toMatchObject({ receipt: { success: true } });
    expect(paid.signedIn).toBeUndefined();
    for (let i = 0; i < 5; i++) {
      const again = await client.pay(`${app.url}/five`);
      expect(again.response.status, `sign-in ${i + 1}`).toBe(200);
      expect(again.signedIn).toBe(true);
      expect(again.receipt).toBeUndefined();
    }
    expect(client.spent).toBe(PRICE);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
    // Another route it never paid for: it pays, it does not try to sign in.
    const other = await client.pay(`${app.url}/pass`);
    expect(other).toMatchObject({ receipt: { success: true } });
    // The five uses are spent: refused sign_in_no_access, it pays with the refusal's challenge.
    const sixth = await client.pay(`${app.url}/five`);
    expect(sixth.response.status).toBe(200);
    expect(sixth).toMatchObject({ receipt: { success: true } });
    expect(facilitator.settles).toBe(3);
    expect(client.spent).toBe(3n * PRICE);
  });

  it('ends the access when the pass ends', async () => {
    let offset = 0;
    const { app } = await server('koa', () => Date.now() + offset);
    const pay = officialClient(3);
    expect((await pay(`${app.url}/pass`)).headers.has('payment-response')).toBe(true);
    const signedIn = await pay(`${app.url}/pass`);
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.has('payment-response')).toBe(false);
    offset = 601_000;
    const challenge = challengeOf(await fetch(`${app.url}/pass`));
    const proof = await officialProof(challenge, payerAccount(devnet, 3), `${app.url}/pass`);
    const after = await fetch(`${app.url}/pass`, { headers: { 'SIGN-IN-WITH-X': proof } });
    expect(after.status).toBe(402);
    expect(await errorCodeOf(after)).toBe('sign_in_no_access');
  });
});
