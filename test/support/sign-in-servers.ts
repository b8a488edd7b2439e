// Servers for the sign-in tests: a Tollbooth app on Express, Fastify or Koa whose gate knows its
// own public URL (baseUrl is the loopback URL it listens on, so the port is chosen first), every
// path answering `{ok, method, path, run}`; and the official SIWX proof for a challenge.

import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import {
  type PaymentGateOptions,
  type PaymentRequired,
  type RoutesConfig,
  SIGN_IN_EXTENSION,
} from '@tollbooth/core';
import type { Devnet } from '@tollbooth/devnet';
import { type CreateExactEvmSchemeParameters, createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import { tollbooth as fastifyTollbooth } from '@tollbooth/fastify';
import { tollbooth as koaTollbooth } from '@tollbooth/koa';
import { createSIWxPayload, encodeSIWxHeader } from '@x402/extensions/sign-in-with-x';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import type { LocalAccount } from 'viem';
import { type Framework, type HandlerRuns, type Listening, listen } from './interop-harness';

/** The secret every sign-in test server signs its nonces with (instances of one service share it). */
export const SIGN_IN_SECRET = 'sign-in tests: a secret of more than 32 characters';

/** A free loopback port (the server listens on it right after). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export type SignInServerOptions = Omit<PaymentGateOptions, 'schemes' | 'routes' | 'baseUrl' | 'signIn'> & {
  routes: RoutesConfig;
  signIn?: PaymentGateOptions['signIn'];
  /** Options of the exact EVM scheme beyond its chain reader (e.g. smart-wallet payments). */
  scheme?: Omit<CreateExactEvmSchemeParameters, 'publicClient'>;
};

/** A Tollbooth app on `framework` whose baseUrl is its own loopback URL. */
export async function startSignInServer(
  framework: Framework,
  devnet: Devnet,
  options: SignInServerOptions,
): Promise<Listening & { runs: HandlerRuns }> {
  const { scheme, ...gate } = options;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const gateOptions: Omit<PaymentGateOptions, 'routes'> & { routes: RoutesConfig } = {
    signIn: { secret: SIGN_IN_SECRET },
    ...gate,
    baseUrl: url,
    schemes: [createExactEvmScheme({ ...scheme, publicClient: devnet.publicClient })],
  };
  const runs: HandlerRuns = new Map();
  const answer = (method: string, path: string) => {
    const key = `${method} ${path}`;
    const run = (runs.get(key) ?? 0) + 1;
    runs.set(key, run);
    return { ok: true, method, path, run };
  };
  if (framework === 'express') {
    const app = express();
    app.use(tollbooth(gateOptions));
    app.all('/{*path}', (req, res) => {
      res.json(answer(req.method, req.path));
    });
    return { ...(await listen(app, port)), runs };
  }
  if (framework === 'koa') {
    const app = new Koa();
    app.use(koaTollbooth(gateOptions)).use((ctx) => {
      ctx.body = answer(ctx.method, ctx.path);
    });
    return { ...(await listen(app.callback(), port)), runs };
  }
  const app = Fastify({ forceCloseConnections: true });
  await app.register(fastifyTollbooth, gateOptions);
  app.all('/*', async (request) => answer(request.method, request.url.split('?')[0]!));
  await app.listen({ port, host: '127.0.0.1' });
  return { url, server: app.server, close: () => app.close(), runs };
}

/** The official client's SIGN-IN-WITH-X header for a challenge's sign-in offer, signed by `account`. */
export async function officialProof(
  challenge: PaymentRequired,
  account: LocalAccount,
  url: string,
  change: (info: Record<string, unknown>) => void = () => {},
): Promise<string> {
  const offer = challenge.extensions?.[SIGN_IN_EXTENSION] as {
    info: Record<string, unknown>;
    supportedChains: Array<{ chainId: string; type: string }>;
  };
  const chain = offer.supportedChains[0]!;
  const info = { ...offer.info, chainId: chain.chainId, type: chain.type };
  change(info);
  // biome-ignore lint/suspicious/noExplicitAny: the official type of the completed info
  const payload = await createSIWxPayload(info as any, account, url);
  return encodeSIWxHeader(payload);
}
