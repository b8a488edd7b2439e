// The paid Express app of the ledger durability suites, the same in a child process
// (ledger-crash-server.ts) and in the test process: the exact EVM scheme with on-chain reconcile,
// Tollbooth's in-process EVM facilitator settling on the devnet, and a ledger store from a URL.
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpFacilitatorClient, type GateHooks, type LedgerStore } from '@tollbooth/core';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import express from 'express';
import { createNonceManager, createPublicClient, defineChain, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';

/** The price of every paid route, atomic units of the devnet token (0.001 USDC). */
export const LEDGER_PRICE = 1000n;

/** Public origin every instance serves under: resource URLs do not depend on the port. */
export const LEDGER_BASE_URL = 'http://ledger.tollbooth.test';

/** Everything an instance needs; JSON so a child process can receive it in its environment. */
export interface LedgerAppConfig {
  rpcUrl: string;
  chainId: number;
  multicall3: string;
  token: { address: string; name: string; version: string };
  payTo: string;
  /** Private key of the settling account. */
  facilitatorKey: Hex;
  /** Identifies the instance in ledger owners and in handler bodies. */
  instanceId: string;
  /** Facilitator receipt wait before `settlement_pending`, ms. */
  receiptTimeoutMs?: number;
  /**
   * An external facilitator (a `tollbooth-facilitator` process, the fault proxy) instead of the
   * in-process one, with its settle timeout, ms (default 5 000).
   */
  facilitatorUrl?: string;
  settleTimeoutMs?: number;
  /** Gate: how long a duplicate waits for another instance before 409, ms. */
  inFlightWaitMs?: number;
  /** Gate: lease of a claim, ms (default the gate's, 10 s). */
  leaseMs?: number;
  /** Every handler run appends `<instanceId> <runId>` to this file (a counter shared by processes). */
  handlerLog?: string;
  /** Child only: SIGKILL itself from `onSettled`, after the response was stored, before it is sent. */
  crashOnSettled?: boolean;
  /** The public URL instead of LEDGER_BASE_URL (sign-in proofs name it: a proxy in front of the instances). */
  baseUrl?: string;
  /**
   * Offers sign-in-with-x with this nonce secret on `GET /pass` (a 600 s pass) and `GET /uses`
   * (five uses), both at the price of `GET /paid`.
   */
  signInSecret?: string;
}

/**
 * `GET /paid` (maxTimeoutSeconds 60), `GET /short` (maxTimeoutSeconds 10), `GET /first` (settles
 * before its handler, maxTimeoutSeconds 60), `GET /paid-id` and `POST /order-id` (the
 * payment-identifier extension; the order's JSON body is parsed after the gate) and the free
 * `/health`. A request with `x-handler-fail: 1` is answered 503 by its handler (nothing logged):
 * the gate releases its payment, as after any failed handler.
 */
export function createLedgerApp(
  config: LedgerAppConfig,
  ledger: LedgerStore,
  extra: { hooks?: GateHooks; now?: () => number; beforeGate?: express.RequestHandler } = {},
) {
  const chain = defineChain({
    id: config.chainId,
    name: 'Tollbooth devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl] } },
    contracts: { multicall3: { address: config.multicall3 as Hex } },
  });
  const publicClient = createPublicClient({ chain, transport: http(config.rpcUrl), pollingInterval: 50 });
  // A nonce manager of its own: a test may drop a pending transaction and start a new facilitator.
  const account = privateKeyToAccount(config.facilitatorKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const facilitator = config.facilitatorUrl
    ? createHttpFacilitatorClient({
        url: config.facilitatorUrl,
        settleTimeoutMs: config.settleTimeoutMs ?? 5_000,
      })
    : createExactEvmFacilitator({
        account,
        chain,
        rpcUrl: config.rpcUrl,
        pollingIntervalMs: 50,
        ...(config.receiptTimeoutMs === undefined ? {} : { receiptTimeoutMs: config.receiptTimeoutMs }),
      });
  const price = {
    amount: LEDGER_PRICE.toString(),
    asset: config.token.address,
    extra: { name: config.token.name, version: config.token.version },
  };
  const network = `eip155:${config.chainId}`;
  const middleware = tollbooth({
    routes: {
      'GET /paid': { accepts: { network, payTo: config.payTo, price, maxTimeoutSeconds: 60 } },
      'GET /short': { accepts: { network, payTo: config.payTo, price, maxTimeoutSeconds: 10 } },
      'GET /first': {
        accepts: { network, payTo: config.payTo, price, maxTimeoutSeconds: 60 },
        settle: 'before-handler',
      },
      'GET /paid-id': {
        accepts: { network, payTo: config.payTo, price, maxTimeoutSeconds: 60 },
        paymentIdentifier: true,
      },
      'POST /order-id': {
        accepts: { network, payTo: config.payTo, price, maxTimeoutSeconds: 60 },
        paymentIdentifier: true,
      },
      ...(config.signInSecret
        ? {
            'GET /pass': { accepts: { network, payTo: config.payTo, price }, signIn: { passSeconds: 600 } },
            'GET /uses': { accepts: { network, payTo: config.payTo, price }, signIn: { uses: 5 } },
          }
        : {}),
    },
    ...(config.signInSecret ? { signIn: { secret: config.signInSecret } } : {}),
    schemes: [createExactEvmScheme({ publicClient })],
    facilitator,
    ledger,
    baseUrl: config.baseUrl ?? LEDGER_BASE_URL,
    instanceId: config.instanceId,
    pollIntervalMs: 25,
    ...(config.inFlightWaitMs === undefined ? {} : { inFlightWaitMs: config.inFlightWaitMs }),
    ...(config.leaseMs === undefined ? {} : { leaseMs: config.leaseMs }),
    ...(extra.hooks ? { hooks: extra.hooks } : {}),
    ...(extra.now ? { now: extra.now } : {}),
  });
  const app = express();
  app.get('/health', (_req, res) => {
    res.json({ ok: true, instance: config.instanceId });
  });
  if (extra.beforeGate) app.use(extra.beforeGate);
  app.use(middleware);
  const handler = (req: express.Request, res: express.Response) => {
    if (req.headers['x-handler-fail'] === '1') {
      res.status(503).json({ failed: true, instance: config.instanceId });
      return;
    }
    const run = randomUUID();
    if (config.handlerLog) appendFileSync(config.handlerLog, `${config.instanceId} ${run}\n`);
    res.json({ paid: true, path: req.path, payer: req.payment?.payer, instance: config.instanceId, run });
  };
  app.get('/paid', handler);
  app.get('/short', handler);
  app.get('/first', handler);
  app.get('/paid-id', handler);
  app.get('/pass', handler);
  app.get('/uses', handler);
  app.post('/order-id', express.json(), (req, res) => {
    const run = randomUUID();
    if (config.handlerLog) appendFileSync(config.handlerLog, `${config.instanceId} ${run}\n`);
    res.json({ ordered: req.body as unknown, instance: config.instanceId, run });
  });
  return { app, gate: middleware.gate };
}

/** Listens on a free loopback port. */
export async function listenLedgerApp(
  app: express.Express,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
