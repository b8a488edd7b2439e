import type { Server } from 'node:http';
import type { LedgerStore, TollboothGate } from '@tollbooth/core';
import type { Discovery } from '@tollbooth/core/discovery';
import type { Devnet } from '@tollbooth/devnet';
import type { Logger } from 'pino';
import type { Capabilities, CapabilitySet } from './capabilities';
import { createLanguageModel } from './capabilities/language-model/model';
import type { ServiceConfig } from './config';
import { methodsOfRoutes } from './http/cors';
import type { Readiness } from './http/routes';
import type { ServiceRoute } from './http/types';
import { ledgerKind } from './ledger';
import type { ServiceMetrics } from './metrics';
import { mountExpress } from './mount/express';
import { mountFastify } from './mount/fastify';
import { mountKoa } from './mount/koa';
import type { AnyResource } from './resources/kit';
import type { Publication } from './resources/publish';
import type { MempoolSimulator } from './simulator/server';
import type { Clock } from './snapshot/clock';
import type { SnapshotService } from './snapshot/service';
import { buildApplication } from './startup/application';
import { createCleanupStack } from './startup/cleanup';
import { startHttpServer } from './startup/http-server';
import { createServiceLogger } from './startup/logger';
import { startMetricsServer } from './startup/metrics-server';
import { type StartedObservatory, startObservatory } from './startup/observatory';
import { startPayments } from './startup/payments';
import { openStores } from './startup/stores';
import { startUpstreams } from './startup/upstreams';

/** Parts a caller (a test, the demo) may supply instead of the ones the service would start. */
export interface FeeServiceOverrides {
  /** Clock of the snapshot service (tests drive freshness with a manual clock). */
  clock?: Clock;
  /** A running simulator to use as the embedded upstream; not closed by the service. */
  simulator?: MempoolSimulator;
  /** A running devnet for the in-process facilitator; not stopped by the service. */
  devnet?: Devnet;
  logger?: Logger;
  /** The resources to publish instead of the registry's (tests add one to see it published). */
  resources?: readonly AnyResource[];
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
  /** What resources share; absent ones make their resources paused. */
  capabilities: Partial<Capabilities>;
  /** How each resource of the registry is published here (availability, reason). */
  publications: readonly Publication[];
  /** The facilitator's base URL (the in-process one when FACILITATOR_URL is unset). */
  facilitatorUrl: string;
  /** The recipient of every payment. */
  payTo: string;
  /** `/metrics` on its own listener (`METRICS_PORT`); absent when the main port serves it. */
  metricsUrl?: string;
  /** The embedded simulator, when it is the upstream. */
  simulator?: MempoolSimulator;
  /** The devnet, when the facilitator is in-process. */
  devnet?: Devnet;
  /** The fee observatory (history, recorder), unless no upstream gives block statistics. */
  observatory?: StartedObservatory;
  routes: readonly ServiceRoute[];
  readiness(): Promise<Readiness>;
  /** Graceful shutdown: stop accepting, finish in-flight requests (settlements), then stop everything. */
  close(): Promise<void>;
}

const MOUNTS = { fastify: mountFastify, express: mountExpress, koa: mountKoa } as const;

/**
 * Starts the fee service, step by step: the stores, each asked once (`startup/stores.ts`), the
 * Bitcoin upstreams and the snapshot poller (`startup/upstreams.ts`), the payment side and the
 * observatory (`startup/payments.ts`, `startup/observatory.ts`), the
 * HTTP server (`startup/http-server.ts`), the capabilities and the application published from the
 * resource registry (`startup/application.ts`), then the mount on the configured framework. A
 * failing step stops what the earlier ones started.
 * @example
 * const service = await startFeeService(loadConfig());
 * console.log(service.url);
 * await service.close();
 */
export async function startFeeService(
  config: ServiceConfig,
  overrides: FeeServiceOverrides = {},
): Promise<RunningFeeService> {
  const logger = overrides.logger ?? createServiceLogger(config.logLevel);
  const cleanups = createCleanupStack(logger);
  try {
    const { ledger, rateLimitRedis, history } = await openStores(config, cleanups, logger);
    const upstreams = await startUpstreams(config, overrides, cleanups, logger);
    // The observatory (its history run forward at start-up) and the payment side (the devnet) start together.
    const observatoryStart = startObservatory(config, upstreams, history, cleanups, logger);
    let payments: Awaited<ReturnType<typeof startPayments>>;
    try {
      payments = await startPayments(config, overrides, cleanups, logger);
    } catch (error) {
      await observatoryStart.catch(() => {});
      throw error;
    }
    const observatory = await observatoryStart;
    const http = await startHttpServer(config, cleanups, logger);

    const capabilities: CapabilitySet & Pick<Capabilities, 'snapshots' | 'bitcoin' | 'payments'> = {
      snapshots: upstreams.snapshots,
      bitcoin: upstreams.bitcoin,
      payments: {
        terms: payments.terms,
        facilitator: payments.facilitator,
        facilitatorName: config.facilitator.name,
        schemes: payments.schemes,
      },
      ...(observatory ? { history: observatory.observatory } : {}),
      ...(config.ai.model
        ? {
            languageModel: createLanguageModel({
              baseUrl: config.ai.model.baseUrl,
              model: config.ai.model.name,
              timeoutMs: config.ai.model.timeoutMs,
              ...(config.ai.model.apiKey ? { apiKey: config.ai.model.apiKey } : {}),
            }),
          }
        : {}),
    };
    const app = buildApplication({
      config,
      capabilities,
      payments,
      ledger,
      baseUrl: http.baseUrl,
      logger,
      ...(overrides.clock ? { clock: overrides.clock } : {}),
      ...(overrides.resources ? { resources: overrides.resources } : {}),
    });
    const mounted = await MOUNTS[config.framework]({
      routes: app.routes,
      gate: app.gate,
      edge: app.edge,
      rateLimit: { ...config.rateLimit, ...(rateLimitRedis ? { redis: rateLimitRedis } : {}) },
      ownLimits: app.ownLimits,
      trustProxy: config.trustProxy,
      onError: (error) => logger.error({ err: error }, 'handler failed'),
    });
    cleanups.push('mount', () => mounted.close());
    const metricsUrl =
      config.metrics.port === undefined
        ? undefined
        : await startMetricsServer(
            {
              host: config.metrics.host,
              metrics: { port: config.metrics.port, token: config.metrics.token },
            },
            app.metrics,
            cleanups,
          );
    http.attach(mounted.listener, {
      label: app.label,
      metrics: app.metrics,
      exchanges: app.exchanges,
      isPaid: (method, target) => app.gate.isPaid(method, target),
      methodsOf: methodsOfRoutes(app.routes),
    });
    logger.info(
      {
        url: http.url,
        baseUrl: http.baseUrl,
        framework: config.framework,
        profile: config.profile,
        ledger: ledgerKind(config.ledgerUrl),
        facilitator: payments.facilitatorUrl,
        network: payments.terms.network,
        payTo: payments.terms.payTo,
        metrics: metricsUrl ?? `${http.url}/metrics`,
        paused: app.publications.filter((p) => p.availability !== 'active').map((p) => p.key),
      },
      'fee service listening',
    );

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        await http.drain(config.shutdownTimeoutMs);
        await cleanups.run();
        logger.info('fee service stopped');
      })();
      return closing;
    };

    return {
      url: http.url,
      baseUrl: http.baseUrl,
      config,
      server: http.server,
      gate: app.gate,
      discovery: app.discovery,
      snapshots: upstreams.snapshots,
      metrics: app.metrics,
      ledger,
      capabilities,
      publications: app.publications,
      facilitatorUrl: payments.facilitatorUrl,
      payTo: payments.terms.payTo,
      ...(metricsUrl ? { metricsUrl } : {}),
      ...(upstreams.simulator ? { simulator: upstreams.simulator } : {}),
      ...(payments.devnet ? { devnet: payments.devnet } : {}),
      ...(observatory ? { observatory } : {}),
      routes: app.routes,
      readiness: app.readiness,
      close,
    };
  } catch (error) {
    await cleanups.run();
    throw error;
  }
}
