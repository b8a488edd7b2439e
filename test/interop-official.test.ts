// GitHub issue 3, part 4: Tollbooth and the official x402 packages pay and settle each other on a
// real chain. Runs once on our TollboothUSD and once on Circle's FiatTokenV2_2.
import { createHttpFacilitatorClient, decodeHeaderJson, type SettleResponse } from '@tollbooth/core';
import { type Devnet, type DevnetTokenKind, startDevnet } from '@tollbooth/devnet';
import type { createExactEvmFacilitator } from '@tollbooth/evm';
import { type RunningFacilitatorServer, startFacilitatorServer } from '@tollbooth/facilitator';
import { createEvmPaymentSigner, createPayingClient } from '@tollbooth/fetch';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme as OfficialExactEvmClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as OfficialExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import express from 'express';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balances,
  deltas,
  devnetFacilitator,
  devnetPrice,
  type Listening,
  listen,
  observed,
  PRICE,
  paidRoute,
  payerAccount,
  startOfficialFacilitator,
  startTollboothApp,
} from './support/interop-harness';

describe.each<DevnetTokenKind>(['tollbooth', 'circle'])(
  'interop with the official x402 packages on the %s token',
  (token) => {
    let devnet: Devnet;
    let officialFacilitator: Awaited<ReturnType<typeof startOfficialFacilitator>>;
    let ourFacilitatorServer: RunningFacilitatorServer;
    const servers: Listening[] = [];
    let ours: ReturnType<typeof createExactEvmFacilitator>;

    beforeAll(async () => {
      devnet = await startDevnet({ chainId: 8453, token, payers: 3 });
      ours = devnetFacilitator(devnet);
      // The official facilitator settles from another account, so the two never share a nonce.
      officialFacilitator = await startOfficialFacilitator(
        devnet,
        devnet.accounts.deployer.privateKey as Hex,
      );
      ourFacilitatorServer = await startFacilitatorServer({ facilitator: ours });
    });

    afterAll(async () => {
      await Promise.all(servers.map((s) => s.close()));
      await officialFacilitator?.close();
      await ourFacilitatorServer?.close();
      await devnet?.stop();
    });

    function officialClient(payerIndex: number) {
      // The devnet token sits at the canonical Base USDC address: the default spend controls know it.
      const client = new x402Client().register(
        'eip155:*',
        new OfficialExactEvmClient(payerAccount(devnet, payerIndex)),
      );
      return wrapFetchWithPayment(fetch, client);
    }

    it('the official client pays a Tollbooth-Express route settled by the in-process facilitator', async () => {
      const facilitator = observed(ours);
      const app = await startTollboothApp(devnet, {
        routes: { 'GET /paid': paidRoute(devnet) },
        facilitator,
      });
      servers.push(app);
      const payer = payerAccount(devnet, 0).address;
      const before = await balances(devnet, payer);

      const response = await officialClient(0)(`${app.url}/paid`);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ ok: true, path: '/paid', run: 1 });
      const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
      expect(facilitator.settles).toBe(1);
    });

    it('the official client pays a Tollbooth-Express route settled by the official facilitator through createHttpFacilitatorClient', async () => {
      const facilitator = createHttpFacilitatorClient({ url: officialFacilitator.url });
      // Our client parses the official /supported answer.
      expect((await facilitator.supported()).kinds).toContainEqual(
        expect.objectContaining({ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }),
      );
      const app = await startTollboothApp(devnet, {
        routes: { 'GET /paid': paidRoute(devnet) },
        facilitator,
      });
      servers.push(app);
      const payer = payerAccount(devnet, 1).address;
      const before = await balances(devnet, payer);
      const callsBefore = officialFacilitator.calls.length;

      const response = await officialClient(1)(`${app.url}/paid`);

      expect(response.status).toBe(200);
      const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
      // The transaction came from the official facilitator's account.
      const tx = await devnet.publicClient.getTransaction({ hash: receipt.transaction as Hex });
      expect(tx.from.toLowerCase()).toBe(devnet.accounts.deployer.address.toLowerCase());
      expect(officialFacilitator.calls.slice(callsBefore)).toEqual(['POST /verify', 'POST /settle']);
      expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
    });

    it("Tollbooth's client pays an @x402/express route whose official resource server uses a facilitator served over HTTP", async () => {
      // The official middleware asks /supported when it is created: the facilitator runs already.
      const resourceServer = new x402ResourceServer(
        new HTTPFacilitatorClient({ url: ourFacilitatorServer.url }),
      ).register('eip155:8453', new OfficialExactEvmServer());
      const app = express();
      app.use(
        paymentMiddleware(
          {
            'GET /official': {
              accepts: {
                scheme: 'exact',
                network: 'eip155:8453',
                payTo: devnet.accounts.payTo.address,
                price: devnetPrice(devnet),
              },
              description: 'an official route',
            },
          },
          resourceServer,
        ),
      );
      app.get('/official', (_req, res) => {
        res.json({ official: true });
      });
      const server = await listen(app);
      servers.push(server);
      const account = payerAccount(devnet, 2);
      const before = await balances(devnet, account.address);
      const client = createPayingClient({
        signer: createEvmPaymentSigner({ account }),
        maxAmountPerPayment: PRICE,
      });

      const { response, receipt, attempts, payload } = await client.pay(`${server.url}/official`);

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ official: true });
      expect(attempts).toBe(1);
      expect(payload?.x402Version).toBe(2);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer: account.address });
      const raw = decodeHeaderJson(response.headers.get('payment-response')!) as SettleResponse;
      expect(raw.transaction).toBe(receipt?.transaction);
      expect(client.spent).toBe(PRICE);
      expect(await deltas(devnet, account.address, before)).toEqual({ paid: PRICE, received: PRICE });
    });
  },
);
