import type { Discovery } from '@tollbooth/core/discovery';
import type { ServiceMetrics } from '../metrics';
import { type MetricsAccess, metricsHandler } from './metrics-access';
import type { RouteContext, RouteResult, ServiceRoute } from './types';

/** Result of the readiness probe. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

export interface ServiceRoutesOptions {
  /** The resources' routes (`buildResourceRoutes`), listed first. */
  resourceRoutes: readonly ServiceRoute[];
  discovery: Discovery;
  metrics: ServiceMetrics;
  /** /readyz: a validated snapshot exists and the facilitator's /supported answered. */
  readiness(): Promise<Readiness>;
  /** Who may read /metrics on the main port; default anyone. */
  metricsAccess?: MetricsAccess;
  /** Pages for people (the dashboard at `/`), listed last. */
  pageRoutes?: readonly ServiceRoute[];
}

function discoveryRoute(path: string, discovery: Discovery): ServiceRoute {
  return {
    method: 'GET',
    path,
    handler(context: RouteContext): RouteResult {
      const answer = discovery.respond({
        method: context.method,
        url: context.url.href,
        header: (name) => context.header(name),
        requestId: context.requestId,
      });
      if (!answer) return { status: 404 };
      return { status: answer.status, headers: answer.headers, body: answer.body };
    },
  };
}

/**
 * Every route of the fee service, framework-neutral: the resources (free and paid), the discovery
 * documents, the metrics and the health probes.
 */
export function createServiceRoutes(options: ServiceRoutesOptions): ServiceRoute[] {
  const { discovery, metrics } = options;
  const paths = discovery.respond.paths;
  const routes: ServiceRoute[] = [
    ...options.resourceRoutes,
    discoveryRoute(paths.catalog, discovery),
    discoveryRoute(paths.wellKnown, discovery),
    discoveryRoute(paths.openapi, discovery),
    {
      method: 'GET',
      path: '/healthz',
      handler: () => ({ status: 200, headers: { 'cache-control': 'no-store' }, body: { status: 'ok' } }),
    },
    {
      method: 'GET',
      path: '/readyz',
      async handler() {
        const readiness = await options.readiness();
        return {
          status: readiness.ready ? 200 : 503,
          headers: { 'cache-control': 'no-store' },
          body: { status: readiness.ready ? 'ready' : 'not_ready', checks: readiness.checks },
        };
      },
    },
    { method: 'GET', path: '/metrics', handler: metricsHandler(metrics, options.metricsAccess ?? {}) },
    ...(options.pageRoutes ?? []),
  ];
  return routes;
}

/**
 * The route label of a path for metrics: the first matching route's pattern, else `other`. Paths
 * without `:params` are looked up in a map; only the pattern routes listed before the hit (or all
 * of them, for a miss) are tried as regular expressions.
 */
export function createRouteLabeler(
  routes: readonly ServiceRoute[],
): (method: string, path: string) => string {
  const exact = new Map<string, number>();
  const patterns: Array<{ index: number; path: string; regex: RegExp }> = [];
  routes.forEach((route, index) => {
    if (!/:[A-Za-z_]+/.test(route.path)) {
      if (!exact.has(route.path)) exact.set(route.path, index);
      return;
    }
    patterns.push({
      index,
      path: route.path,
      regex: new RegExp(
        `^${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`,
      ),
    });
  });
  const labelOf = (path: string): string => {
    const hit = exact.get(path);
    for (const pattern of patterns) {
      if (hit !== undefined && pattern.index > hit) break;
      if (pattern.regex.test(path)) return pattern.path;
    }
    return hit === undefined ? 'other' : (routes[hit]?.path ?? 'other');
  };
  // Each path is labelled once: a request's metrics then cost one map lookup, not a regex scan.
  // Bounded (oldest out first); a path longer than LABEL_MEMO_PATH_MAX is labelled every time.
  const memo = new Map<string, string>();
  return (_method, path) => {
    if (path.length > LABEL_MEMO_PATH_MAX) return labelOf(path);
    let label = memo.get(path);
    if (label === undefined) {
      label = labelOf(path);
      if (memo.size >= LABEL_MEMO_SIZE) memo.delete(memo.keys().next().value as string);
      memo.set(path, label);
    }
    return label;
  };
}

/** Paths whose label {@link createRouteLabeler} keeps. */
export const LABEL_MEMO_SIZE = 1024;
/** Longer paths are labelled every time, not kept. */
export const LABEL_MEMO_PATH_MAX = 256;
