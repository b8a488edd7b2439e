// The three thirty-line examples, paid for for real: a local chain with an EIP-3009 token, the
// in-process EVM facilitator, and a payment signed by a funded payer.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createPaymentPayload } from '@tollbooth/evm';
import { createApp as createExpressApp } from '@tollbooth/express-paywall';
import { createApp as createFastifyApp } from '@tollbooth/fastify-paywall';
import { createApp as createKoaApp } from '@tollbooth/koa-paywall';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Options = Parameters<typeof createExpressApp>[0];
type Started = { url: string; close(): Promise<void> };

function listening(server: Server): Promise<Started> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

const EXAMPLES: Array<{ name: string; payer: number; start(options: Options): Promise<Started> }> = [
  {
    name: 'express-paywall',
    payer: 0,
    start: async (options) => listening(createServer(createExpressApp(options))),
  },
  {
    name: 'fastify-paywall',
    payer: 1,
    async start(options) {
      const app = await createFastifyApp(options);
      return { url: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() };
    },
  },
  {
    name: 'koa-paywall',
    payer: 2,
    start: async (options) => listening(createServer(createKoaApp(options).callback())),
  },
];

let devnet: Devnet;
let options: Options;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 84532, payers: 3 });
  const facilitator = createExactEvmFacilitator({
    account: devnet.accounts.facilitator.privateKey,
    chain: devnet.chain,
    rpcUrl: devnet.rpcUrl,
    pollingIntervalMs: 50,
  });
  options = { payTo: devnet.accounts.payTo.address, facilitator };
});
afterAll(() => devnet?.stop());

describe.each(EXAMPLES)('examples/$name', ({ payer, start }) => {
  it('answers 402 unpaid, then serves the joke for a real $0.001 payment and charges exactly that', async () => {
    const server = await start(options);
    try {
      const unpaid = await fetch(`${server.url}/joke`);
      expect(unpaid.status).toBe(402);
      const challenge = decodeHeaderJson(unpaid.headers.get('payment-required')!) as PaymentRequired;
      expect(challenge.accepts[0]).toMatchObject({ amount: '1000', asset: devnet.token.address });

      const account = privateKeyToAccount(devnet.accounts.payers[payer]!.privateKey);
      const payment = await createPaymentPayload({ paymentRequired: challenge, account });
      const before = [
        await devnet.balanceOf(account.address),
        await devnet.balanceOf(options.payTo as `0x${string}`),
      ];
      const paid = await fetch(`${server.url}/joke`, {
        headers: { 'PAYMENT-SIGNATURE': encodeHeader(payment) },
      });
      expect(paid.status).toBe(200);
      expect(await paid.json()).toMatchObject({ paidBy: account.address });
      const receipt = decodeHeaderJson(paid.headers.get('payment-response')!) as Record<string, unknown>;
      expect(receipt).toMatchObject({ success: true, network: 'eip155:84532', payer: account.address });
      expect(receipt['transaction']).toMatch(/^0x[0-9a-f]{64}$/);
      expect(before[0]! - (await devnet.balanceOf(account.address))).toBe(1000n);
      expect((await devnet.balanceOf(options.payTo as `0x${string}`)) - before[1]!).toBe(1000n);
    } finally {
      await server.close();
    }
  });
});
