import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  compileRoutes,
  createDiscovery,
  createHttpFacilitatorClient,
  createPaymentGate,
  DEFAULT_USD_ASSETS,
  type Discovery,
  type FacilitatorClient,
  type LedgerStore,
  type TollboothGate,
} from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { startFacilitatorServer } from '@tollbooth/facilitator';
import { Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import type { ServiceConfig } from './config';
import { createFeeSchemas } from './domain/schemas';
import {
  createEdge,
  createRouteLabeler,
  createServiceRoutes,
  type PaidCheck,
  type Readiness,
  rememberLastPaidCheck,
} from './http/routes';
import type { ServiceRoute } from './http/types';
import { ledgerKind, openLedger } from './ledger';
import { createServiceMetrics, paymentOutcomeOf, type ServiceMetrics } from './metrics';
import { mountExpress } from './mount/express';
import { mountFastify } from './mount/fastify';
import { mountKoa } from './mount/koa';
import type { MountedApp, MountOptions } from './mount/types';
import { buildRoutesConfig, previewOpenApiRoute, type ResourceDeps } from './resources/index';
import { type MempoolSimulator, startMempoolSimulator } from './simulator/server';
import type { Clock } from './snapshot/clock';
import { createSnapshotService, type SnapshotService } from './snapshot/service';
import type { FeeSnapshotSource } from './snapshot/types';
import { createBitcoinCoreClient } from './upstreams/bitcoin-core';
import { createEsploraClient } from './upstreams/esplora';
import { createMempoolSpaceClient } from './upstreams/mempool-space';

/** Parts a caller (a test, the demo) may supply instead of the ones the service would start. */
export interface FeeServiceOverrides {
  /** Clock of the snapshot service (tests drive freshness with a manual clock). */
  clock?: Clock;
  /** A running simulator to use as the embedded upstream; not closed by the service. */
  simulator?: MempoolSimulator;
  /** A running devnet for the in-process facilitator; not stopped by the service. */
  devnet?: Devnet;
  logger?: Logger;
}

/** A running fee service. */
export interface RunningFeeService {
  /** Where the server listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** The canonical base URL (PUBLIC_BASE_URL, else `url`). */
  baseUrl: string;
  config: ServiceConfig;
  server: Server;
  gate: TollboothGate;
  discovery: Discovery;
  snapshots: SnapshotService;
  metrics: ServiceMetrics;
  ledger: LedgerStore;
  /** The facilitator's base URL (the in-process one when FACILITATOR_URL is unset). */
  facilitatorUrl: string;
  /** The recipient of every payment. */
  payTo: string;
  /** The embedded simulator, when it is the upstream. */
  simulator?: MempoolSimulator;
  /** The devnet, when the facilitator is in-process. */
  devnet?: Devnet;
  routes: readonly ServiceRoute[];
  readiness(): Promise<Readiness>;
  /** Graceful shutdown: stop accepting, finish in-flight requests (settlements), then stop everything. */
  close(): Promise<void>;
}

const MOUNTS = { fastify: mountFastify, express: mountExpress, koa: mountKoa } as const;

/** When a response's request arrived (performance.now(), ms). */
const STARTED = Symbol('fee-service.started');
type Timed = ServerResponse & { [STARTED]?: number };

function upstreamFor(config: ServiceConfig, simulator: MempoolSimulator | undefined): FeeSnapshotSource {
  const { kind, url, coreUser, corePassword } = config.upstream;
  if (kind === 'esplora') return createEsploraClient({ baseUrl: url ?? simulator!.esploraUrl });
  if (kind === 'core') {
    return createBitcoinCoreClient({
      url: url ?? simulator!.coreRpcUrl,
      ...(url ? {} : { username: simulator!.rpcUser, password: simulator!.rpcPassword }),
      ...(coreUser ? { username: coreUser } : {}),
      ...(corePassword ? { password: corePassword } : {}),
    });
  }
  return createMempoolSpaceClient({ baseUrl: url ?? simulator!.url });
}

function chainIdOf(network: string): number {
  return Number(network.slice('eip155:'.length));
}

async function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Starts the fee service: upstream (or the embedded simulator), snapshot poller, facilitator (or
 * the devnet with the in-process facilitator), settlement ledger, payment gate, discovery,
 * metrics and the HTTP server on the configured framework.
 * @example
 * const service = await startFeeService(loadConfig());
 * console.log(service.url);
 * await service.close();
 */
export async function startFeeService(
  config: ServiceConfig,
  overrides: FeeServiceOverrides = {},
): Promise<RunningFeeService> {
  const logger = overrides.logger ?? pino({ level: config.logLevel, base: { service: 'fee-service' } });
  const cleanups: Array<{ name: string; run: () => Promise<unknown> | unknown }> = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) {
      try {
        await step.run();
      } catch (error) {
        logger.warn({ err: error, step: step.name }, 'shutdown step failed');
      }
    }
    cleanups.length = 0;
  };

  try {
    // Upstream: a configured URL, else the embedded deterministic simulator.
    let simulator = overrides.simulator;
    if (!config.upstream.url && !simulator) {
      const started = await startMempoolSimulator({
        scenario: config.simulator.scenario,
        seed: config.simulator.seed,
        timeScale: config.simulator.timeScale,
      });
      simulator = started;
      cleanups.push({ name: 'simulator', run: () => started.close() });
      logger.info({ url: started.url, scenario: config.simulator.scenario }, 'mempool simulator started');
    }
    const upstream = upstreamFor(config, config.upstream.url ? undefined : simulator);
    const snapshots = createSnapshotService({
      upstream,
      intervalMs: config.snapshotIntervalMs,
      ...(overrides.clock ? { clock: overrides.clock } : {}),
      onError: (error) => logger.warn({ err: error, upstream: upstream.source }, 'snapshot poll failed'),
    });
    snapshots.start();
    cleanups.push({
      name: 'snapshots',
      run: async () => {
        snapshots.stop();
        await snapshots.settled();
      },
    });
    await snapshots.settled();

    // Facilitator: a configured URL, else the devnet with the in-process EVM facilitator over HTTP.
    let devnet = overrides.devnet;
    let facilitatorUrl = config.facilitator.url;
    if (!facilitatorUrl) {
      if (!devnet) {
        const started = await startDevnet({ chainId: chainIdOf(config.payment.network) });
        devnet = started;
        cleanups.push({ name: 'devnet', run: () => started.stop() });
        logger.info({ rpcUrl: started.rpcUrl, token: started.token.address }, 'devnet started');
      }
      const inProcess = createExactEvmFacilitator({
        account: devnet.accounts.facilitator.privateKey,
        chain: devnet.chain,
        rpcUrl: devnet.rpcUrl,
      });
      const served = await startFacilitatorServer({ facilitator: inProcess });
      cleanups.push({ name: 'facilitator', run: () => served.close() });
      facilitatorUrl = served.url;
      logger.info({ url: served.url }, 'in-process facilitator started');
    } else {
      devnet = undefined;
    }
    const facilitator: FacilitatorClient = createHttpFacilitatorClient({
      url: facilitatorUrl,
      timeoutMs: config.facilitator.timeoutMs,
      settleTimeoutMs: config.facilitator.settleTimeoutMs,
    });
    const payTo = config.payment.payTo ?? devnet!.accounts.payTo.address;

    const ledger = openLedger(config.ledgerUrl);
    cleanups.push({ name: 'ledger', run: () => ledger.close() });
    const rateLimitRedis = config.rateLimit.redisUrl
      ? new Redis(config.rateLimit.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 })
      : undefined;
    if (rateLimitRedis) cleanups.push({ name: 'rate-limit redis', run: () => rateLimitRedis.quit() });

    // The server listens first: the canonical base URL may depend on the port it got.
    let dispatch: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
    let inFlight = 0;
    let drained: (() => void) | undefined;
    let label: (method: string, path: string) => string = () => 'other';
    let metrics: ServiceMetrics | undefined;
    let isPaid: PaidCheck = () => false;
    // One listener for every response (no closure per request): metrics, payment outcome, drain.
    function finished(this: Timed) {
      inFlight -= 1;
      if (inFlight === 0) drained?.();
      const req = this.req;
      const target = req.url ?? '/';
      const query = target.indexOf('?');
      const path = query >= 0 ? target.slice(0, query) : target;
      const method = req.method ?? 'GET';
      const route = label(method, path);
      const seconds = (performance.now() - this[STARTED]!) / 1000;
      metrics?.observeRequest({ method, route, status: this.statusCode }, seconds);
      // The raw target, as the gate matches it (it decodes the path itself).
      if (isPaid(method, target)) {
        const paid = req.headers['payment-signature'] !== undefined || req.headers['x-payment'] !== undefined;
        metrics?.observePayment({ route, outcome: paymentOutcomeOf(this.statusCode, paid) });
      }
      if (logger.isLevelEnabled('debug'))
        logger.debug({ method, url: req.url, status: this.statusCode, ms: seconds * 1000 }, 'request');
    }
    const server = createServer((req, res) => {
      (res as Timed)[STARTED] = performance.now();
      inFlight += 1;
      res.on('close', finished);
      if (!dispatch) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"starting"}');
        return;
      }
      dispatch(req, res);
    });
    const address = await listen(server, config.port, config.host);
    const url = `http://${hostForUrl(config.host)}:${address.port}`;
    const baseUrl = config.publicBaseUrl ?? url;
    cleanups.push({
      name: 'server',
      run: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    });

    const terms = {
      network: config.payment.network,
      payTo,
      asset: config.payment.asset,
      assetName: config.payment.assetName,
      assetVersion: config.payment.assetVersion,
    };
    const deps: ResourceDeps = {
      snapshots,
      terms,
      facilitatorName: config.facilitator.name,
      schemas: createFeeSchemas({
        snapshotSchema: upstream.snapshotSchema,
        source: upstream.source,
        facilitator: config.facilitator.name,
      }),
    };
    const schemes = [createExactEvmScheme(devnet ? { publicClient: devnet.publicClient } : {})];
    const table = compileRoutes(buildRoutesConfig(deps, config.profile), { schemes, baseUrl });
    const gate = createPaymentGate({
      routes: table,
      schemes,
      facilitator,
      ledger,
      logger: {
        warn: (fields, message) => logger.warn(fields, message),
        error: (fields, message) => logger.error(fields, message),
      },
      hooks: {
        onSettled: (payment, receipt) =>
          logger.info(
            {
              requestId: payment.requestId,
              route: payment.route,
              payer: payment.payer,
              transaction: receipt.transaction,
            },
            'payment settled',
          ),
      },
    });
    const usdAssets = { ...DEFAULT_USD_ASSETS, [terms.asset.toLowerCase()]: 6 };
    const discovery = createDiscovery({
      table,
      facilitatorUrl,
      usdAssets,
      openapi: {
        title: 'Bitcoin fee data service',
        description:
          'Bitcoin fee rates, mempool figures and illustrative savings (free preview), a paid send-or-wait decision and a catalog of paid resources, over x402 v2.',
        freeRoutes: [previewOpenApiRoute(deps)],
      },
    });
    metrics = createServiceMetrics({
      snapshots,
      ...(overrides.clock ? { now: () => overrides.clock!.now() } : {}),
    });
    const readiness = async (): Promise<Readiness> => {
      const checks: Readiness['checks'] = {};
      try {
        snapshots.current();
        checks['snapshot'] = { ok: true };
      } catch (error) {
        checks['snapshot'] = { ok: false, detail: error instanceof Error ? error.message : String(error) };
      }
      try {
        await facilitator.supported();
        checks['facilitator'] = { ok: true };
      } catch (error) {
        checks['facilitator'] = { ok: false, detail: error instanceof Error ? error.message : String(error) };
      }
      return { ready: Object.values(checks).every((check) => check.ok), checks };
    };
    const routes = createServiceRoutes({ resources: deps, discovery, metrics, readiness });
    label = createRouteLabeler(routes);
    // One route match per request: the edge asks first, then the gate's adapter and the metrics.
    isPaid = rememberLastPaidCheck((method, target) => gate.isPaid(method, target));
    const edge = createEdge({ table: () => gate.routes, resources: deps, isPaid });
    const mountOptions: MountOptions = {
      routes,
      gate: Object.create(gate, { isPaid: { value: isPaid } }) as TollboothGate,
      edge,
      rateLimit: { ...config.rateLimit, ...(rateLimitRedis ? { redis: rateLimitRedis } : {}) },
      trustProxy: config.trustProxy,
      onError: (error) => logger.error({ err: error }, 'handler failed'),
    };
    const mounted: MountedApp = await MOUNTS[config.framework](mountOptions);
    cleanups.push({ name: 'mount', run: () => mounted.close() });
    dispatch = mounted.listener;
    logger.info(
      {
        url,
        baseUrl,
        framework: config.framework,
        profile: config.profile,
        ledger: ledgerKind(config.ledgerUrl),
        facilitator: facilitatorUrl,
        network: terms.network,
        payTo,
      },
      'fee service listening',
    );

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        // Stop accepting; idle keep-alive sockets go now, busy ones when their response ends.
        server.close();
        server.closeIdleConnections();
        if (inFlight > 0) {
          logger.info({ inFlight }, 'waiting for in-flight requests (settlements) to finish');
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, config.shutdownTimeoutMs);
            timer.unref();
            drained = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        await cleanup();
        logger.info('fee service stopped');
      })();
      return closing;
    };

    return {
      url,
      baseUrl,
      config,
      server,
      gate,
      discovery,
      snapshots,
      metrics,
      ledger,
      facilitatorUrl,
      payTo,
      ...(simulator ? { simulator } : {}),
      ...(devnet ? { devnet } : {}),
      routes,
      readiness,
      close,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
