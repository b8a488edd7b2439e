// Tollbooth and the official x402 packages pay and settle each other on a real chain, for the
// newest official release the registry serves and the oldest Tollbooth supports
// (support/official-releases.ts), each on our TollboothUSD and on Circle's FiatTokenV2_2:
// the official fetch and axios clients pay Tollbooth on Express, Fastify and Koa; the official
// facilitator settles for Tollbooth; Tollbooth's client pays the official Express and Hono
// middleware, whose resource server uses Tollbooth's facilitator over HTTP.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { createHttpFacilitatorClient, decodeHeaderJson, type SettleResponse } from '@tollbooth/core';
import { type Devnet, type DevnetTokenKind, startDevnet } from '@tollbooth/devnet';
import type { createExactEvmFacilitator } from '@tollbooth/evm';
import { type RunningFacilitatorServer, startFacilitatorServer } from '@tollbooth/facilitator';
import { createEvmPaymentSigner, createPayingClient } from '@tollbooth/fetch';
import axios from 'axios';
import express from 'express';
import { Hono } from 'hono';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balances,
  deltas,
  devnetFacilitator,
  devnetPrice,
  FRAMEWORKS,
  type Listening,
  listen,
  observed,
  PRICE,
  paidRoute,
  payerAccount,
  startOfficialFacilitator,
  startTollboothOn,
} from './support/interop-harness';
import { describeRelease, NEWEST, OFFICIAL_RELEASES, OLDEST } from './support/official-releases';

const MATRIX = OFFICIAL_RELEASES.flatMap((release) =>
  (['tollbooth', 'circle'] as DevnetTokenKind[]).map((token) => ({
    release,
    token,
    title: `${describeRelease(release)} on the ${token} token`,
  })),
);

describe.each(MATRIX)('interop with the $title', ({ release, token }) => {
  let devnet: Devnet;
  let officialFacilitator: Awaited<ReturnType<typeof startOfficialFacilitator>>;
  let ourFacilitatorServer: RunningFacilitatorServer;
  const servers: Listening[] = [];
  let ours: ReturnType<typeof createExactEvmFacilitator>;

  beforeAll(async () => {
    devnet = await startDevnet({ chainId: 8453, token, payers: 4 });
    ours = devnetFacilitator(devnet);
    // The official facilitator settles from another account, so the two never share a nonce.
    officialFacilitator = await startOfficialFacilitator(
      devnet,
      devnet.accounts.deployer.privateKey as Hex,
      release,
    );
    ourFacilitatorServer = await startFacilitatorServer({ facilitator: ours });
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await officialFacilitator?.close();
    await ourFacilitatorServer?.close();
    await devnet?.stop();
  });

  /** The official exact EVM client scheme of this release for a devnet payer. */
  function officialScheme(payerIndex: number) {
    // The devnet token sits at the canonical Base USDC address: the default spend controls know it.
    return new release.evmClient.ExactEvmScheme(payerAccount(devnet, payerIndex));
  }

  function officialFetch(payerIndex: number) {
    const client = new release.fetch.x402Client().register('eip155:*', officialScheme(payerIndex));
    return release.fetch.wrapFetchWithPayment(fetch, client);
  }

  function officialAxios(payerIndex: number) {
    const client = new release.axios.x402Client().register('eip155:*', officialScheme(payerIndex));
    return release.axios.wrapAxiosWithPayment(axios.create(), client);
  }

  async function tollboothServer(framework: (typeof FRAMEWORKS)[number]) {
    const facilitator = observed(ours);
    const app = await startTollboothOn(framework, devnet, {
      routes: { 'GET /paid': paidRoute(devnet) },
      facilitator,
    });
    servers.push(app);
    return { app, facilitator };
  }

  it.each(FRAMEWORKS)(
    'the official fetch client pays a Tollbooth-%s route settled by the in-process facilitator',
    async (framework) => {
      const { app, facilitator } = await tollboothServer(framework);
      const payer = payerAccount(devnet, 0).address;
      const before = await balances(devnet, payer);

      const response = await officialFetch(0)(`${app.url}/paid`);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ ok: true, path: '/paid', run: 1 });
      const receipt = release.fetch.decodePaymentResponseHeader(response.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
      expect(facilitator.settles).toBe(1);
    },
  );

  it.each(FRAMEWORKS)(
    'the official axios client pays a Tollbooth-%s route settled by the in-process facilitator',
    async (framework) => {
      const { app, facilitator } = await tollboothServer(framework);
      const payer = payerAccount(devnet, 1).address;
      const before = await balances(devnet, payer);

      const response = await officialAxios(1).get(`${app.url}/paid`);

      expect(response.status).toBe(200);
      expect(response.data).toEqual({ ok: true, path: '/paid', run: 1 });
      const receipt = release.axios.decodePaymentResponseHeader(response.headers['payment-response']);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
      expect(facilitator.settles).toBe(1);
    },
  );

  it('the official client pays a Tollbooth route settled by the official facilitator through createHttpFacilitatorClient', async () => {
    const facilitator = createHttpFacilitatorClient({ url: officialFacilitator.url });
    // Our client parses the official /supported answer.
    expect((await facilitator.supported()).kinds).toContainEqual(
      expect.objectContaining({ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }),
    );
    const app = await startTollboothOn('express', devnet, {
      routes: { 'GET /paid': paidRoute(devnet) },
      facilitator,
    });
    servers.push(app);
    const payer = payerAccount(devnet, 2).address;
    const before = await balances(devnet, payer);
    const callsBefore = officialFacilitator.calls.length;

    const response = await officialFetch(2)(`${app.url}/paid`);

    expect(response.status).toBe(200);
    const receipt = release.fetch.decodePaymentResponseHeader(response.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
    // The transaction came from the official facilitator's account.
    const tx = await devnet.publicClient.getTransaction({ hash: receipt.transaction as Hex });
    expect(tx.from.toLowerCase()).toBe(devnet.accounts.deployer.address.toLowerCase());
    // Local verify (docs/ledger.md#local-verify): the route settles after its handler and the
    // scheme reads the devnet, so the official facilitator is asked once, at /settle.
    expect(officialFacilitator.calls.slice(callsBefore)).toEqual(['POST /settle']);
    expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  /** An official resource server whose facilitator is Tollbooth's, served over HTTP. */
  function officialResourceServer() {
    // The official middleware asks /supported when it is created: the facilitator runs already.
    return new release.coreServer.x402ResourceServer(
      new release.coreServer.HTTPFacilitatorClient({ url: ourFacilitatorServer.url }),
    ).register('eip155:8453', new release.evmServer.ExactEvmScheme());
  }

  const officialRoutes = () => ({
    'GET /official': {
      accepts: {
        scheme: 'exact',
        network: 'eip155:8453' as const,
        payTo: devnet.accounts.payTo.address,
        price: devnetPrice(devnet),
      },
      description: 'an official route',
    },
  });

  /** Tollbooth's client pays `url` once; the official server answers `{official: true}`. */
  async function expectPaidByTollbooth(url: string) {
    const account = payerAccount(devnet, 3);
    const before = await balances(devnet, account.address);
    const client = createPayingClient({
      signer: createEvmPaymentSigner({ account }),
      maxAmountPerPayment: PRICE,
    });

    const { response, receipt, attempts, payload } = await client.pay(url);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ official: true });
    expect(attempts).toBe(1);
    expect(payload?.x402Version).toBe(2);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer: account.address });
    const raw = decodeHeaderJson(response.headers.get('payment-response')!) as SettleResponse;
    expect(raw.transaction).toBe(receipt?.transaction);
    expect(client.spent).toBe(PRICE);
    expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
  }

  it("Tollbooth's client pays an @x402/express route whose resource server uses Tollbooth's facilitator", async () => {
    const app = express();
    app.use(release.express.paymentMiddleware(officialRoutes(), officialResourceServer()));
    app.get('/official', (_req, res) => {
      res.json({ official: true });
    });
    const server = await listen(app);
    servers.push(server);

    await expectPaidByTollbooth(`${server.url}/official`);
  });

  it("Tollbooth's client pays an @x402/hono route whose resource server uses Tollbooth's facilitator", async () => {
    const app = new Hono();
    app.use(release.hono.paymentMiddleware(officialRoutes(), officialResourceServer()));
    app.get('/official', (c) => c.json({ official: true }));
    const server = await listen(getRequestListener(app.fetch));
    servers.push(server);

    await expectPaidByTollbooth(`${server.url}/official`);
  });
});

describe('the README', () => {
  it('records the official versions this suite runs against, newest and oldest', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    for (const name of Object.keys(NEWEST.versions)) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${name}\``));
      expect(
        row
          ?.split('|')
          .map((cell) => cell.trim())
          .slice(2, 4),
        name,
      ).toEqual([NEWEST.versions[name], OLDEST.versions[name]]);
    }
  });
});
