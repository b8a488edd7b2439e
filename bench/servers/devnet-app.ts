// An Express app with one Tollbooth-paid route on the devnet token, settled either by
// Tollbooth's in-process EVM facilitator (FACILITATOR=in-process) or by a facilitator URL
// reached through createHttpFacilitatorClient (FACILITATOR=<url>).
import { createServer } from 'node:http';
import { createHttpFacilitatorClient, type FacilitatorClient } from '@tollbooth/core';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import express from 'express';
import type { Hex } from 'viem';
import { countingHttp, devnetChain, env, POLLING_INTERVAL_MS } from '../lib/devnet-chain';
import { HELLO_BODY, PAID_PATH } from '../lib/fixtures';
import { announce } from '../lib/serve';

const rpcUrl = env('DEVNET_RPC_URL');
const chainId = Number(env('DEVNET_CHAIN_ID'));
const chain = devnetChain(rpcUrl, chainId);
const mode = env('FACILITATOR');
// The in-process facilitator's JSON-RPC calls are counted (RPC_CALLS=<json> for the runner), on the
// same transport as its own default (batching HTTP).
const countingTransport = countingHttp(rpcUrl, { batch: { batchSize: 100, wait: 0 } });
const facilitator: FacilitatorClient =
  mode === 'in-process'
    ? createExactEvmFacilitator({
        account: env('FACILITATOR_KEY') as Hex,
        chain,
        transport: countingTransport,
        pollingIntervalMs: POLLING_INTERVAL_MS,
      })
    : createHttpFacilitatorClient({ url: mode });

const app = express();
app.disable('x-powered-by');
app.use(
  tollbooth({
    routes: {
      [`GET ${PAID_PATH}`]: {
        accepts: {
          network: `eip155:${chainId}`,
          payTo: env('PAY_TO'),
          price: {
            amount: env('PRICE_ATOMIC'),
            asset: env('TOKEN'),
            extra: { name: env('TOKEN_NAME'), version: env('TOKEN_VERSION') },
          },
          maxTimeoutSeconds: 600,
        },
        description: 'a devnet benchmark resource',
      },
    },
    schemes: [createExactEvmScheme()],
    facilitator,
  }),
);
app.get(PAID_PATH, (_req, res) => {
  res.json(HELLO_BODY);
});
await announce(createServer(app));
