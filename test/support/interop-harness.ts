// Shared pieces of the interop suites: real HTTP servers on free loopback ports, the official
// x402 facilitator served over HTTP (a few lines of node:http, nothing of ours in its path),
// Tollbooth and official Express apps, and on-chain balance bookkeeping.
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeHeaderJson,
  encodeHeader,
  type FacilitatorClient,
  type PaymentGateOptions,
  type PaymentPayload,
  type PaymentPayloadV1,
  type PaymentRequired,
  type PaymentRequirements,
  type RoutesConfig,
} from '@tollbooth/core';
import type { Devnet } from '@tollbooth/devnet';
import {
  type CreateExactEvmFacilitatorParameters,
  type CreateExactEvmFacilitatorReturnType,
  createExactEvmFacilitator,
  createExactEvmScheme,
} from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import { tollbooth as fastifyTollbooth } from '@tollbooth/fastify';
import { tollbooth as koaTollbooth } from '@tollbooth/koa';
import type { x402Facilitator } from '@x402/core/facilitator';
import express, { type Express } from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { type Address, createNonceManager, createWalletClient, type Hex, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';
import { expect } from 'vitest';
import { NEWEST, type OfficialRelease } from './official-releases';

/** The price every interop route charges, in atomic units (0.001 USDC). */
export const PRICE = 1000n;

/**
 * The snippets of the READMEs and docs, run by the tests on a Base Sepolia devnet: the placeholder
 * `payTo` they write (a valid address, with a comment telling the reader to put theirs) and the
 * public test facilitator they name, each replaced before the snippet runs.
 */
export const SNIPPET_PLACEHOLDERS = {
  payTo: "'0x209693Bc6afc0C5328bA36FaF03C514EF312287C'",
  facilitatorUrl: "'https://x402.org/facilitator'",
} as const;

/**
 * A snippet with its placeholders replaced by the devnet's `payTo` and a running facilitator's URL;
 * fails (naming `what`) when the snippet no longer writes one of them, so a doc edit cannot leave a
 * test running something else.
 */
export function fillSnippetPlaceholders(
  what: string,
  source: string,
  values: { payTo: string; facilitatorUrl: string },
): string {
  for (const placeholder of Object.values(SNIPPET_PLACEHOLDERS))
    expect(source, `${what} names ${placeholder}`).toContain(placeholder);
  return source
    .replaceAll(SNIPPET_PLACEHOLDERS.payTo, `'${values.payTo}'`)
    .replaceAll(SNIPPET_PLACEHOLDERS.facilitatorUrl, `'${values.facilitatorUrl}'`);
}

export interface Listening {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Listens on a free loopback port (or on `port`). */
export async function listen(handler: Express | RequestListener, port = 0): Promise<Listening> {
  const server = createServer(handler as RequestListener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The exact/EVM price object of the devnet token (explicit amount, asset and EIP-712 domain). */
export function devnetPrice(devnet: Devnet, amount: bigint = PRICE, name = devnet.token.name) {
  return {
    amount: amount.toString(),
    asset: devnet.token.address,
    extra: { name, version: devnet.token.version },
  };
}

/**
 * Tollbooth's in-process facilitator settling on the devnet from its facilitator account, polling
 * fast for tests. Each facilitator owns its nonce manager, so several devnets with one chain id in
 * one process do not disturb each other.
 */
export function devnetFacilitator(
  devnet: Devnet,
  overrides: Partial<CreateExactEvmFacilitatorParameters> = {},
): CreateExactEvmFacilitatorReturnType {
  return createExactEvmFacilitator({ ...devnet.facilitatorOptions, pollingIntervalMs: 50, ...overrides });
}

/** A Tollbooth route config on the devnet's network paying the devnet's payTo. */
export function paidRoute(
  devnet: Devnet,
  overrides: { amount?: bigint; name?: string; x402Version?: 1 | 2; maxTimeoutSeconds?: number } = {},
): RoutesConfig[string] {
  return {
    accepts: {
      network: `eip155:${devnet.chainId}`,
      payTo: devnet.accounts.payTo.address,
      price: devnetPrice(devnet, overrides.amount, overrides.name),
      ...(overrides.maxTimeoutSeconds === undefined
        ? {}
        : { maxTimeoutSeconds: overrides.maxTimeoutSeconds }),
    },
    description: 'an interop resource',
    ...(overrides.x402Version === undefined ? {} : { x402Version: overrides.x402Version }),
  };
}

/** Counts handler runs per path. */
export type HandlerRuns = Map<string, number>;

/**
 * An Express app behind `tollbooth()`: every route of `routes` answers `{ok, path, run}` (JSON);
 * `/slow/*` answers once `holdSlow()` resolves, so a test decides when it finishes. The scheme
 * reconciles on the devnet.
 */
export async function startTollboothApp(
  devnet: Devnet,
  options: Omit<PaymentGateOptions, 'schemes'> & { holdSlow?: () => Promise<void> },
): Promise<Listening & { runs: HandlerRuns; app: Express }> {
  const app = express();
  const runs: HandlerRuns = new Map();
  const { holdSlow, ...gateOptions } = options;
  app.use(
    tollbooth({ ...gateOptions, schemes: [createExactEvmScheme({ publicClient: devnet.publicClient })] }),
  );
  app.get('/{*path}', async (req, res) => {
    const run = (runs.get(req.path) ?? 0) + 1;
    runs.set(req.path, run);
    if (req.path.startsWith('/slow')) await holdSlow?.();
    res.json({ ok: true, path: req.path, run });
  });
  const listening = await listen(app);
  return { ...listening, runs, app };
}

/** The frameworks Tollbooth has adapters for. */
export const FRAMEWORKS = ['express', 'fastify', 'koa'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/**
 * `startTollboothApp` on any of the three frameworks: every path answers `{ok, path, run}`
 * (JSON) behind the gate, the scheme reconciling on the devnet.
 */
export async function startTollboothOn(
  framework: Framework,
  devnet: Devnet,
  options: Omit<PaymentGateOptions, 'schemes' | 'routes'> & { routes: RoutesConfig },
): Promise<Listening & { runs: HandlerRuns }> {
  if (framework === 'express') return startTollboothApp(devnet, options);
  const gateOptions = { ...options, schemes: [createExactEvmScheme({ publicClient: devnet.publicClient })] };
  const runs: HandlerRuns = new Map();
  const answer = (path: string) => {
    const run = (runs.get(path) ?? 0) + 1;
    runs.set(path, run);
    return { ok: true, path, run };
  };
  if (framework === 'koa') {
    const app = new Koa();
    app.use(koaTollbooth(gateOptions)).use((ctx) => {
      ctx.body = answer(ctx.path);
    });
    return { ...(await listen(app.callback())), runs };
  }
  const app = Fastify({ forceCloseConnections: true });
  await app.register(fastifyTollbooth, gateOptions);
  app.get('/*', async (request) => answer(request.url.split('?')[0]!));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, server: app.server, close: () => app.close(), runs };
}

/**
 * The official x402 facilitator of `release` (`x402Facilitator` + the exact EVM facilitator
 * scheme) served over the standard HTTP API with node:http only, settling from `privateKey`.
 */
export async function startOfficialFacilitator(
  devnet: Devnet,
  privateKey: Hex,
  release: OfficialRelease = NEWEST,
): Promise<Listening & { facilitator: x402Facilitator; calls: string[] }> {
  // The official facilitator signs with whatever account it is given: give it a nonce manager of
  // its own, since viem's shared one remembers nonces across devnets with the same chain id.
  const account = privateKeyToAccount(privateKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const client = createWalletClient({
    account,
    chain: devnet.chain,
    transport: http(devnet.rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions);
  const signer = release.evm.toFacilitatorEvmSigner(
    Object.assign(client, { address: client.account.address }) as never,
  );
  const facilitator = new release.coreFacilitator.x402Facilitator().register(
    `eip155:${devnet.chainId}`,
    new release.evmFacilitator.ExactEvmScheme(signer),
  );
  const calls: string[] = [];
  const listening = await listen(async (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
    };
    try {
      calls.push(`${req.method} ${req.url}`);
      if (req.method === 'GET' && req.url === '/supported') return send(200, facilitator.getSupported());
      if (req.method === 'POST' && (req.url === '/verify' || req.url === '/settle')) {
        const body = JSON.parse(await readBody(req)) as {
          paymentPayload: never;
          paymentRequirements: never;
        };
        const result =
          req.url === '/verify'
            ? await facilitator.verify(body.paymentPayload, body.paymentRequirements)
            : await facilitator.settle(body.paymentPayload, body.paymentRequirements);
        return send(200, result);
      }
      return send(404, { error: 'not found' });
    } catch (error) {
      return send(500, { error: error instanceof Error ? error.message : String(error) });
    }
  });
  return { ...listening, facilitator, calls };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Records the verify/settle calls a FacilitatorClient receives (an observer, not a stand-in). */
export function observed(
  facilitator: FacilitatorClient,
): FacilitatorClient & { settles: number; verifies: number } {
  const counter = {
    settles: 0,
    verifies: 0,
    verify: (
      p: Parameters<FacilitatorClient['verify']>[0],
      r: Parameters<FacilitatorClient['verify']>[1],
    ) => {
      counter.verifies += 1;
      return facilitator.verify(p, r);
    },
    settle: (
      p: Parameters<FacilitatorClient['settle']>[0],
      r: Parameters<FacilitatorClient['settle']>[1],
    ) => {
      counter.settles += 1;
      return facilitator.settle(p, r);
    },
    supported: () => facilitator.supported(),
  };
  return counter;
}

/** Balances of the payer and the recipient, to compare after a request. */
export async function balances(devnet: Devnet, payer: Address) {
  const [payerBalance, payToBalance] = await Promise.all([
    devnet.balanceOf(payer),
    devnet.balanceOf(devnet.accounts.payTo.address),
  ]);
  return { payer: payerBalance, payTo: payToBalance };
}

/** How much the payer lost and the recipient gained since `before`. */
export async function deltas(devnet: Devnet, payer: Address, before: { payer: bigint; payTo: bigint }) {
  const after = await balances(devnet, payer);
  return { paid: before.payer - after.payer, received: after.payTo - before.payTo };
}

export function payerAccount(devnet: Devnet, index: number) {
  return privateKeyToAccount(devnet.accounts.payers[index]!.privateKey as Hex);
}

/** Decodes the `PAYMENT-REQUIRED` header of a 402. */
export function challengeOf(response: Response): PaymentRequired {
  const header = response.headers.get('payment-required');
  if (!header) throw new Error(`no PAYMENT-REQUIRED header (status ${response.status})`);
  return decodeHeaderJson(header) as PaymentRequired;
}

/** Sends a request carrying `payload` in `header` (default PAYMENT-SIGNATURE). */
export function sendPayment(
  url: string,
  payload: PaymentPayload | PaymentPayloadV1 | string,
  header: 'PAYMENT-SIGNATURE' | 'X-PAYMENT' = 'PAYMENT-SIGNATURE',
): Promise<Response> {
  const value = typeof payload === 'string' ? payload : encodeHeader(payload);
  return fetch(url, { headers: { [header]: value } });
}

/** The `{error: {code}}` of an Error body, or the `error` string of a PaymentRequired body. */
export async function errorCodeOf(response: Response): Promise<string | undefined> {
  const body = (await response.clone().json()) as { error?: string | { code?: string } };
  return typeof body.error === 'string' ? body.error : body.error?.code;
}

/** The requirement a challenge offers for the devnet token (the first one). */
export function requirementOf(paymentRequired: PaymentRequired): PaymentRequirements {
  const requirement = paymentRequired.accepts[0];
  if (!requirement) throw new Error('the challenge offers nothing');
  return requirement;
}
