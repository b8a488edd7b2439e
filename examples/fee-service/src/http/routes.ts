import type { RouteTable } from '@tollbooth/core';
import type { Discovery } from '@tollbooth/core/discovery';
import type { ServiceMetrics } from '../metrics';
import { takesBody, validateInput } from '../resources/input';
import { type AnyResource, isPaid as isPaidResource, type ResourceEnvironment } from '../resources/kit';
import { type Publication, queryOf } from '../resources/publish';
import { bodyError } from './body';
import { type MetricsAccess, metricsHandler } from './metrics-access';
import { requestIdOf } from './respond';
import type { Edge, EdgeRequest, RouteContext, RouteResult, ServiceRoute } from './types';

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

/** Whether a request (method, raw target) goes to a paid route, as `TollboothGate.isPaid` answers. */
export type PaidCheck = (method: string, target: string) => boolean;

/**
 * `isPaid` with its last answer kept. The edge, the gate's adapter and the metrics each ask about
 * the same request one after the other, so one route match answers all three; any other question
 * is passed on (the route table does not change: its availability does, but not what matches).
 */
export function rememberLastPaidCheck(isPaid: PaidCheck): PaidCheck {
  let lastMethod: string | undefined;
  let lastTarget: string | undefined;
  let lastAnswer = false;
  return (method, target) => {
    if (target !== lastTarget || method !== lastMethod) {
      lastAnswer = isPaid(method, target);
      lastMethod = method;
      lastTarget = target;
    }
    return lastAnswer;
  };
}

/** What the edge needs from the resources: their publications and the deployment. */
export interface EdgeOptions {
  table: () => RouteTable;
  publications: readonly Publication[];
  env: ResourceEnvironment;
  /** Defaults to asking the table (`TollboothGate.isPaid`). */
  isPaid?: PaidCheck;
}

/**
 * The edge in front of the gate: a request is "paid" when the gate's own route table matches it
 * (so encodings and dot segments cannot dodge the rate limit); for an active paid resource, its
 * precondition and then its input validation answer before any challenge, so nobody signs for a
 * request that cannot succeed. Only a resource that takes a body makes this asynchronous.
 */
export function createEdge(options: EdgeOptions): Edge {
  const { env } = options;
  const resources = new Map<string, AnyResource>();
  const ownLimits = new Map<string, string>();
  let paidOwnLimits = false;
  for (const { resource, key, availability } of options.publications) {
    resources.set(key, resource);
    if (resource.rateLimit && availability === 'active') {
      const name = resource.rateLimit(env.config).name;
      if (isPaidResource(resource)) paidOwnLimits = true;
      else ownLimits.set(`${resource.method} ${resource.path}`, name);
    }
  }
  const isPaid: PaidCheck =
    options.isPaid ??
    ((method, target) => {
      const upper = method.toUpperCase();
      return upper !== 'OPTIONS' && options.table().match(upper, target) !== undefined;
    });
  const matchActive = (request: EdgeRequest) => {
    const matched = options.table().match(request.method.toUpperCase(), request.target);
    if (matched?.route.availability !== 'active') return undefined;
    const resource = resources.get(matched.route.key);
    return resource ? { matched, resource } : undefined;
  };
  return {
    isPaid: (request) => isPaid(request.method, request.target),
    ownLimit(request) {
      if (isPaid(request.method, request.target)) {
        if (!paidOwnLimits) return undefined;
        return matchActive(request)?.resource.rateLimit?.(env.config).name;
      }
      if (ownLimits.size === 0) return undefined;
      const query = request.target.indexOf('?');
      const path = query < 0 ? request.target : request.target.slice(0, query);
      return ownLimits.get(`${request.method.toUpperCase()} ${path}`);
    },
    precondition(request) {
      // Free requests (most of them) stop here; the full match is made for paid ones only.
      if (!isPaid(request.method, request.target)) return undefined;
      const found = matchActive(request);
      if (!found) return undefined;
      const { matched, resource } = found;
      let id: string | undefined;
      const requestId = () => (id ??= requestIdOf((name) => request.header(name)));
      const early = resource.precondition?.(requestId(), env.capabilities);
      if (early) return early;
      const query = queryOf(request.target);
      // A canonical route's own rule (the gate's 400 non_canonical_request) judges its target.
      if (resource.gate?.canonical || (!resource.input && query === '')) return undefined;
      const validate = (body: Buffer | undefined) => {
        const outcome = validateInput(resource, { params: matched.params, query, body }, requestId(), env);
        return outcome.ok ? undefined : outcome.result;
      };
      if (!takesBody(resource)) return validate(undefined);
      return request.readBody().then(validate, (error: unknown) => bodyError(error, requestId()));
    },
  };
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
  return (_method, path) => {
    const hit = exact.get(path);
    for (const pattern of patterns) {
      if (hit !== undefined && pattern.index > hit) break;
      if (pattern.regex.test(path)) return pattern.path;
    }
    return hit === undefined ? 'other' : (routes[hit]?.path ?? 'other');
  };
}
