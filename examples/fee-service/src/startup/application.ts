import { randomBytes } from 'node:crypto';
import {
  compileRoutes,
  createPaymentGate,
  type LedgerStore,
  type RouteTable,
  TollboothConfigError,
  type TollboothGate,
} from '@tollbooth/core';
import { DEFAULT_USD_ASSETS, type Discovery } from '@tollbooth/core/discovery';
import { toolRoutes } from '@tollbooth/mcp';
import type { Logger } from 'pino';
import type { Capabilities, CapabilitySet } from '../capabilities';
import type { ServiceConfig } from '../config';
import { createDashboardSource } from '../dashboard/data';
import { createDashboardRoutes } from '../dashboard/page';
import { createRouteLabeler, createServiceRoutes, type Readiness } from '../http/routes';
import type { Edge, NamedRateLimit, ServiceRoute } from '../http/types';
import { createMcpRoutes } from '../mcp/endpoint';
import { buildTools } from '../mcp/tools';
import { createServiceMetrics, type ServiceMetrics } from '../metrics';
import { resourceAvailabilityProblems } from '../resources/availability';
import { createEdge } from '../resources/edge';
import type { AnyResource, ResourceEnvironment } from '../resources/kit';
import {
  buildErrorCatalog,
  buildFreeOpenApiRoutes,
  buildResourceRoutes,
  buildRoutesConfig,
  type ErrorCatalogEntry,
  type Publication,
  publicationOf,
} from '../resources/publish';
import { PRICE_PATTERNS, RESOURCES } from '../resources/registry';
import type { Clock } from '../snapshot/clock';
import { publicUrl } from '../upstreams/http';
import { createServiceDiscovery } from './discovery';
import { createPaidExchanges, type PaidExchanges } from './paid-exchanges';
import type { StartedPayments } from './payments';

/** Everything the HTTP layer serves, built from the registry and the capabilities. */
export interface FeeServiceApplication {
  env: ResourceEnvironment;
  publications: Publication[];
  errorCatalog: ErrorCatalogEntry[];
  table: RouteTable;
  gate: TollboothGate;
  discovery: Discovery;
  metrics: ServiceMetrics;
  readiness(): Promise<Readiness>;
  routes: ServiceRoute[];
  edge: Edge;
  /** What the gate's lifecycle hooks reported of each request (the payment metrics read it). */
  exchanges: PaidExchanges;
  label(method: string, path: string): string;
  /** The resources' own rate limits (the x402 demo's). */
  ownLimits: NamedRateLimit[];
}

export interface ApplicationOptions {
  config: ServiceConfig;
  capabilities: CapabilitySet & Pick<Capabilities, 'snapshots' | 'bitcoin' | 'payments'>;
  payments: StartedPayments;
  ledger: LedgerStore;
  baseUrl: string;
  logger: Logger;
  clock?: Clock;
  /** Default the registry's {@link RESOURCES}. */
  resources?: readonly AnyResource[];
}

/**
 * The secret of the sign-in nonces (docs/sign-in-with-x.md#the-fee-service): `SIGN_IN_SECRET`, or a
 * random one for this process (then only this instance accepts the proofs of its challenges).
 */
function signInSecret(config: ServiceConfig, logger: Logger): string {
  if (config.signInSecret) return config.signInSecret;
  logger.info(
    { code: 'sign_in_secret_random' },
    'SIGN_IN_SECRET is unset: sign-in nonces are signed with a random secret of this process (set it on every instance behind one URL)',
  );
  return randomBytes(32).toString('hex');
}

/**
 * Step 5: publishes the registry into this deployment. Each resource's availability comes from
 * its needs and the profile; the route table, the payment gate, discovery (catalog, well-known,
 * OpenAPI, error codes), the routes and the edge's rate-limit names are all built from the same
 * publications; the gate's hooks feed the payment metrics.
 */
export function buildApplication(options: ApplicationOptions): FeeServiceApplication {
  const { config, capabilities, payments, logger } = options;
  const env: ResourceEnvironment = {
    config,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    capabilities,
  };
  const resources = options.resources ?? RESOURCES;
  const publications = resources.map((resource) => publicationOf(resource, env));
  const refused = resourceAvailabilityProblems(publications, config);
  if (refused.length > 0) throw new TollboothConfigError('fee-service configuration', refused);
  const errorCatalog = buildErrorCatalog(resources);
  // The MCP tools are the resources' twins: their routes join the HTTP ones in one table, one gate, one ledger.
  const tools = buildTools(publications, env, payments.terms);
  const routesConfig = {
    ...buildRoutesConfig(publications, PRICE_PATTERNS, env, payments.terms),
    ...toolRoutes(tools),
  };
  const table = compileRoutes(routesConfig, {
    schemes: payments.schemes,
    baseUrl: options.baseUrl,
    signIn: { secret: signInSecret(config, logger) },
  });
  const metrics = createServiceMetrics({
    snapshots: capabilities.snapshots,
    ...(options.clock ? { now: () => options.clock!.now() } : {}),
  });
  const exchanges = createPaidExchanges();
  const gate = createPaymentGate({
    routes: table,
    schemes: payments.schemes,
    facilitator: payments.facilitator,
    ledger: options.ledger,
    ...(config.instanceId ? { instanceId: config.instanceId } : {}),
    // The production profile never runs without a chain reader (config/checks.ts refuses RPC_URL unset).
    requireChainReader: config.profile === 'production',
    replay: config.replay,
    // One facilitator round trip per paid request unless VERIFY_BEFORE_SETTLE asks /verify too.
    verifyBeforeSettle: config.verifyBeforeSettle,
    // A browser opening a paid route gets a page that pays with its wallet (docs/paywall.md).
    paywall: {
      appName: 'Bitcoin fee service',
      usdAssets: { [payments.terms.asset.toLowerCase()]: 6 },
      ...(payments.devnet
        ? {
            // The devnet runs a public chain id: no explorer link, no public RPC to offer the wallet.
            networks: {
              [payments.terms.network]: { name: 'local devnet', explorerTxUrl: null, addChain: null },
            },
          }
        : {}),
    },
    // Every level the gate logs at: its resolutions and refusals after a transfer are at warn,
    // what its reconciler released (nothing charged) at info.
    logger: {
      info: (fields, message) => logger.info(fields, message),
      warn: (fields, message) => logger.warn(fields, message),
      error: (fields, message) => logger.error(fields, message),
    },
    hooks: {
      // Each paid request's outcome for the metrics: matched, challenged or replayed.
      ...exchanges.hooks,
      // Transfers once each (never a replay); a replay is told apart per request (exchanges).
      onTransfer: (event) => metrics.observeTransfer({ route: event.route, via: event.via }),
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
      // A refused payment is the client's doing: one line with the code, never a stack.
      onRejected: (requestId, code, message) =>
        logger.info({ requestId, code, reason: message }, 'payment refused'),
      onReleased: (payment, status) =>
        logger.info(
          {
            requestId: payment.requestId,
            route: payment.route,
            payer: payment.payer,
            status: status ?? 'threw',
          },
          'payment released, nothing charged',
        ),
    },
  });
  const demo = publications.find((p) => p.resource.demo && p.availability === 'active');
  const discovery = createServiceDiscovery({
    table,
    baseUrl: options.baseUrl,
    publications,
    errorCatalog,
    facilitatorUrl: publicUrl(payments.facilitatorUrl),
    usdAssets: { ...DEFAULT_USD_ASSETS, [payments.terms.asset.toLowerCase()]: 6 },
    freeRoutes: buildFreeOpenApiRoutes(publications, env),
    ...(demo ? { demoUrl: `${options.baseUrl.replace(/\/+$/, '')}${demo.resource.path}` } : {}),
  });
  const networks = [...new Set(table.routes.flatMap((route) => route.requirements.map((r) => r.network)))];
  let probe: { at: number; answer: Promise<Readiness['checks'][string]> } | undefined;
  const facilitatorProbe = () => {
    if (probe && Date.now() - probe.at < 1_000) return probe.answer;
    const answer = fetch(`${payments.facilitatorUrl}/supported`, {
      signal: AbortSignal.timeout(Math.min(config.facilitator.timeoutMs, 5_000)),
    }).then(
      async (response) => {
        await response.arrayBuffer();
        return response.ok
          ? { ok: true }
          : { ok: false, detail: `/supported answered HTTP ${response.status}` };
      },
      (error: unknown) => ({
        ok: false,
        detail: `/supported: ${error instanceof Error ? error.message : String(error)}`,
      }),
    );
    probe = { at: Date.now(), answer };
    return answer;
  };
  const readiness = async (): Promise<Readiness> => {
    const checks: Readiness['checks'] = {};
    try {
      capabilities.snapshots.current();
      checks['snapshot'] = { ok: true };
    } catch (error) {
      checks['snapshot'] = { ok: false, detail: error instanceof Error ? error.message : String(error) };
    }
    // Asked now, not the client's memoised /supported (kept 10 minutes): a stopped facilitator
    // makes the service not ready at the next probe. One probe at a time, reused for a second.
    checks['facilitator'] = await facilitatorProbe();
    // The chain reader of each network that has one (RPC_URL, or the devnet's own node).
    for (const network of networks) {
      const scheme = payments.schemes.find((candidate) => candidate.supportsNetwork(network));
      if (!scheme?.chainStatus || scheme.hasChainReader?.(network) === false) continue;
      checks[`chain:${network}`] = await scheme.chainStatus(network).then(
        (status) => (status.ok ? { ok: true } : { ok: false, detail: status.message }),
        (error: unknown) => ({ ok: false, detail: error instanceof Error ? error.message : String(error) }),
      );
    }
    return { ready: Object.values(checks).every((check) => check.ok), checks };
  };
  const paths = discovery.respond.paths;
  const dashboard = createDashboardSource({
    capabilities,
    publications,
    baseUrl: options.baseUrl,
    discovery: { well_known: paths.wellKnown, catalog: paths.catalog, openapi: paths.openapi },
  });
  const routes = createServiceRoutes({
    resourceRoutes: [
      ...buildResourceRoutes(publications, env),
      ...createMcpRoutes({ gate, tools, info: { name: 'bitcoin-fee-service', version: '0.1.0' } }),
    ],
    discovery,
    metrics,
    readiness,
    metricsAccess: { token: config.metrics.token, elsewhere: config.metrics.port !== undefined },
    pageRoutes: createDashboardRoutes({ source: dashboard, title: 'Bitcoin fee dashboard' }),
  });
  const edge = createEdge({ gate, publications, env, patterns: PRICE_PATTERNS });
  const ownLimits = new Map<string, NamedRateLimit>();
  for (const p of publications) {
    const limit = p.availability === 'active' ? p.resource.rateLimit?.(config) : undefined;
    if (limit) ownLimits.set(limit.name, limit);
  }
  return {
    env,
    publications,
    errorCatalog,
    table,
    gate,
    discovery,
    metrics,
    readiness,
    routes,
    edge,
    exchanges,
    label: createRouteLabeler(routes),
    ownLimits: [...ownLimits.values()],
  };
}
