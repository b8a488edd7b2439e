import type { Discovery, RouteTable } from '@tollbooth/core';
import type { ServiceMetrics } from '../metrics';
import { createPreviewResponder, FEE_PREVIEW_PATH, PAID_RESOURCES } from '../resources/index';
import { type PaidResource, type ResourceDeps, routeKey } from '../resources/types';
import { requestIdOf } from './respond';
import type { Edge, RouteContext, RouteResult, ServiceRoute } from './types';

/** Result of the readiness probe. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

export interface ServiceRoutesOptions {
  resources: ResourceDeps;
  discovery: Discovery;
  metrics: ServiceMetrics;
  /** /readyz: a validated snapshot exists and the facilitator's /supported answered. */
  readiness(): Promise<Readiness>;
  /** Paid resources to serve. Default {@link PAID_RESOURCES}. */
  paid?: readonly PaidResource[];
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
 * Every route of the fee service, framework-neutral: the free preview, the paid resources, the
 * discovery documents, the metrics and the health probes.
 */
export function createServiceRoutes(options: ServiceRoutesOptions): ServiceRoute[] {
  const { resources, discovery, metrics } = options;
  const paths = discovery.respond.paths;
  const routes: ServiceRoute[] = [
    // The preview's bytes are built once per snapshot reading (see createPreviewResponder).
    { method: 'GET', path: FEE_PREVIEW_PATH, handler: createPreviewResponder(resources) },
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
    {
      method: 'GET',
      path: '/metrics',
      async handler() {
        const text = await metrics.registry.metrics();
        return {
          status: 200,
          headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' },
          body: Buffer.from(text, 'utf8'),
        };
      },
    },
  ];
  for (const resource of options.paid ?? PAID_RESOURCES) {
    routes.push({
      method: resource.method,
      path: resource.path,
      handler: (context) => resource.handler(context, resources),
    });
  }
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

/**
 * The edge in front of the gate: a request is "paid" when the gate's own route table matches it
 * (so encodings and dot segments cannot dodge the rate limit), and a paid resource's precondition
 * answers before any challenge. `isPaid` defaults to asking the table (`TollboothGate.isPaid`).
 */
export function createEdge(options: {
  table: () => RouteTable;
  resources: ResourceDeps;
  paid?: readonly PaidResource[];
  isPaid?: PaidCheck;
}): Edge {
  const preconditions = new Map<string, NonNullable<PaidResource['precondition']>>();
  for (const resource of options.paid ?? PAID_RESOURCES) {
    if (resource.precondition) preconditions.set(routeKey(resource), resource.precondition);
  }
  const isPaid: PaidCheck =
    options.isPaid ??
    ((method, target) => {
      const upper = method.toUpperCase();
      return upper !== 'OPTIONS' && options.table().match(upper, target) !== undefined;
    });
  return {
    isPaid: (request) => isPaid(request.method, request.target),
    precondition(request) {
      // Free requests (most of them) stop here; the full match is made for paid ones only.
      if (!isPaid(request.method, request.target)) return undefined;
      const matched = options.table().match(request.method.toUpperCase(), request.target);
      if (matched?.route.availability !== 'active') return undefined;
      const check = preconditions.get(matched.route.key);
      return check?.(
        requestIdOf((name) => request.header(name)),
        options.resources,
      );
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
