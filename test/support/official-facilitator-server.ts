// The official x402 facilitator (`x402Facilitator` with `registerExactEvmScheme`, v2 and v1)
// served over HTTP the way the x402 repository's own TypeScript facilitator example serves it:
// Express with express.json(), 400 when paymentPayload or paymentRequirements is missing, 500
// with `{error}` when the facilitator throws. Nothing of Tollbooth is in its path.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import express from 'express';
import { type Chain, createNonceManager, createWalletClient, type Hex, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';

export interface OfficialFacilitatorServer {
  url: string;
  /** The account it settles from. */
  address: string;
  close(): Promise<void>;
}

export async function startOfficialFacilitatorServer(options: {
  chain: Chain;
  rpcUrl: string;
  privateKey: Hex;
}): Promise<OfficialFacilitatorServer> {
  // Its own nonce manager: viem's shared one remembers nonces across devnets with one chain id.
  const account = privateKeyToAccount(options.privateKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const client = createWalletClient({
    account,
    chain: options.chain,
    transport: http(options.rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner(Object.assign(client, { address: account.address }) as never);
  const facilitator = registerExactEvmScheme(new x402Facilitator(), {
    signer,
    networks: `eip155:${options.chain.id}` as `${string}:${string}`,
  });

  const app = express();
  app.use(express.json());
  const bigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);
  for (const operation of ['verify', 'settle'] as const) {
    app.post(`/${operation}`, async (req, res) => {
      try {
        const { paymentPayload, paymentRequirements } = (req.body ?? {}) as Record<string, never>;
        if (!paymentPayload || !paymentRequirements) {
          res.status(400).json({ error: 'Missing paymentPayload or paymentRequirements' });
          return;
        }
        const result = await facilitator[operation](paymentPayload, paymentRequirements);
        res.type('application/json').send(JSON.stringify(result, bigints));
      } catch (error) {
        res.status(500).json({ error: error instanceof Error ? error.message : 'Unknown error' });
      }
    });
  }
  app.get('/supported', (_req, res) => {
    res.json(facilitator.getSupported());
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    address: account.address,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
