// One paid route on the devnet's USDC for the latency benchmark, on one stack:
// `bench/servers/latency-app.ts express|fastify|koa|x402` — Tollbooth on Express, Fastify or Koa
// (a chain reader on the devnet's RPC, as the production profile requires; `SETTLE=before-handler`
// for a route that settles first), or the official @x402/express middleware (x402ResourceServer +
// the exact EVM scheme). Both reach the same facilitator at FACILITATOR_URL. Each stack imports
// only its own framework.
import { createServer } from 'node:http';
import type { PaymentGateOptions, RoutesConfig } from '@tollbooth/core';
import { env } from '../lib/devnet-chain';
import { HELLO_BODY, PAID_PATH } from '../lib/fixtures';
import { announce } from '../lib/serve';

const stack = process.argv[2];
const network = `eip155:${env('DEVNET_CHAIN_ID')}` as const;
const facilitatorUrl = env('FACILITATOR_URL');
// The devnet's token sits at Base's USDC address: "$0.001" resolves to it on both stacks.
const accepts = { network, payTo: env('PAY_TO'), price: '$0.001', maxTimeoutSeconds: 600 };
const description = 'a latency benchmark resource';

async function tollboothOptions(): Promise<PaymentGateOptions & { routes: RoutesConfig }> {
  const { createHttpFacilitatorClient } = await import('@tollbooth/core');
  const { createExactEvmScheme } = await import('@tollbooth/evm');
  const settle = process.env['SETTLE'] === 'before-handler' ? 'before-handler' : 'after-handler';
  return {
    routes: { [`GET ${PAID_PATH}`]: { accepts, description, settle } },
    schemes: [createExactEvmScheme({ rpcUrl: { [network]: env('DEVNET_RPC_URL') } })],
    facilitator: createHttpFacilitatorClient({ url: facilitatorUrl }),
  };
}

if (stack === 'express' || stack === 'x402') {
  const { default: express } = await import('express');
  const app = express();
  app.disable('x-powered-by');
  if (stack === 'express') {
    const { tollbooth } = await import('@tollbooth/express');
    app.use(tollbooth(await tollboothOptions()));
  } else {
    const { HTTPFacilitatorClient, x402ResourceServer } = await import('@x402/core/server');
    const { ExactEvmScheme } = await import('@x402/evm/exact/server');
    const { paymentMiddleware } = await import('@x402/express');
    const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
      network,
      new ExactEvmScheme(),
    );
    const routes = { [`GET ${PAID_PATH}`]: { accepts: { scheme: 'exact', ...accepts }, description } };
    app.use(paymentMiddleware(routes, server));
  }
  app.get(PAID_PATH, (_req, res) => {
    res.json(HELLO_BODY);
  });
  await announce(createServer(app));
} else if (stack === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const { tollbooth } = await import('@tollbooth/fastify');
  const app = Fastify({ logger: false });
  await app.register(tollbooth, await tollboothOptions());
  app.get(PAID_PATH, async () => HELLO_BODY);
  await app.listen({ port: 0, host: '127.0.0.1' });
  await announce(app.server);
} else if (stack === 'koa') {
  const { default: Koa } = await import('koa');
  const { default: Router } = await import('@koa/router');
  const { tollbooth } = await import('@tollbooth/koa');
  const app = new Koa();
  const router = new Router();
  router.get(PAID_PATH, (ctx) => {
    ctx.body = HELLO_BODY;
  });
  app.use(tollbooth(await tollboothOptions()));
  app.use(router.routes());
  await announce(createServer(app.callback()));
} else throw new Error(`unknown stack ${stack} (express, fastify, koa or x402)`);
