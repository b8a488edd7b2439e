import { type RouteTable, TOOL_METHOD } from '@tollbooth/core';
import {
  buildWellKnownDocument,
  createDiscoveryResponder,
  createOpenApiDocument,
  createResourceCatalog,
  createWellKnownDocument,
  type Discovery,
  type FreeRoute,
  type OpenApiDocument,
  type OpenApiSource,
  priceUsdOf,
  toTemplatePath,
  type WellKnownDocument,
  type WellKnownSource,
} from '@tollbooth/core/discovery';
import { takesBody } from '../resources/input';
import { isPaid } from '../resources/kit';
import { type ErrorCatalogEntry, PAUSED_RETRY_AFTER_SECONDS, type Publication } from '../resources/publish';

/** A resource the service lists but cannot sell now, in `/.well-known/x402` under `pausedEndpoints`. */
export interface PausedEndpoint {
  method: string;
  /** URI-template path, e.g. `/api/v1/ai/explain/transaction/{txid}`. */
  pattern: string;
  /** Full URL (a URI template when the path has parameters). */
  resource: string;
  /** Decimal USD; empty for a free resource. */
  priceUsd: string;
  description: string;
  availability: 'paused' | 'retired';
  /** Why: not built yet, a capability this deployment lacks, the profile, or the operator. */
  reason: string;
  retryAfterSeconds: number;
}

/** `/.well-known/x402` of the fee service: the core document plus its paused endpoints. */
export type FeeServiceWellKnown = WellKnownDocument & { pausedEndpoints: PausedEndpoint[] };

export interface ServiceDiscoveryOptions {
  table: RouteTable;
  baseUrl: string;
  publications: readonly Publication[];
  errorCatalog: readonly ErrorCatalogEntry[];
  facilitatorUrl: string;
  usdAssets: Readonly<Record<string, number>>;
  freeRoutes: FreeRoute[];
  /** URL of the free x402 demo, when it is active (the document's `demo`). */
  demoUrl?: string;
}

/** Availability of the table's routes: what makes a cached decoration stale. */
function fingerprint(table: RouteTable): string {
  let out = '';
  for (const route of table.routes) out += `${route.key}=${route.availability};`;
  return out;
}

/** Memoises `build` on the table's availability (prices do not change without a new table). */
function memoOnTable<T>(table: RouteTable, build: () => T): () => T {
  let cached: { key: string; value: T } | undefined;
  return () => {
    const key = fingerprint(table);
    if (cached?.key !== key) cached = { key, value: build() };
    return cached.value;
  };
}

function pausedEndpoints(options: ServiceDiscoveryOptions): PausedEndpoint[] {
  const reasons = new Map(options.publications.map((p) => [p.key, p]));
  const out: PausedEndpoint[] = [];
  const base = options.baseUrl.replace(/\/+$/, '');
  for (const route of [...options.table.routes].sort((a, b) => a.order - b.order)) {
    // A tool route (`TOOL /<name>`) is the MCP twin of a resource: tools/list lists it, not this.
    if (route.isPattern || route.availability === 'active' || route.method === TOOL_METHOD) continue;
    const publication = reasons.get(route.key);
    out.push({
      method: route.method,
      pattern: toTemplatePath(route.path),
      resource: `${base}${toTemplatePath(route.path)}`,
      priceUsd: priceUsdOf(route, options.usdAssets) ?? '',
      description: route.description,
      availability: route.availability,
      reason:
        publication && publication.availability === route.availability && publication.reason
          ? publication.reason
          : `${route.availability} by the operator`,
      retryAfterSeconds: route.retryAfterSeconds,
    });
  }
  for (const publication of options.publications) {
    if (isPaid(publication.resource) || publication.availability === 'active') continue;
    const pattern = toTemplatePath(publication.resource.path);
    out.push({
      method: publication.resource.method,
      pattern,
      resource: `${base}${pattern}`,
      priceUsd: '',
      description: publication.resource.description,
      availability: publication.availability === 'retired' ? 'retired' : 'paused',
      reason: publication.reason ?? 'paused',
      retryAfterSeconds: PAUSED_RETRY_AFTER_SECONDS,
    });
  }
  return out;
}

/**
 * The well-known document with `pausedEndpoints`. While nothing can be bought (every resource
 * paused) core refuses to describe the payment terms; they are then read from the table as if
 * every route were active, and `paidEndpoints` and `resources` stay empty.
 */
function serviceWellKnown(options: ServiceDiscoveryOptions): WellKnownSource {
  const shared = {
    facilitatorUrl: options.facilitatorUrl,
    usdAssets: options.usdAssets,
    ...(options.demoUrl ? { demo: options.demoUrl } : {}),
  };
  const core = createWellKnownDocument({ table: options.table, ...shared });
  const hasActive = () => options.table.routes.some((route) => route.availability === 'active');
  const build = (): FeeServiceWellKnown => {
    let document: WellKnownDocument;
    if (hasActive()) {
      document = core.document();
    } else {
      const allActive = {
        baseUrl: options.baseUrl,
        routes: options.table.routes.map((route) => ({ ...route, availability: 'active' as const })),
      };
      document = {
        ...buildWellKnownDocument(allActive, { table: allActive, baseUrl: options.baseUrl, ...shared }),
        paidEndpoints: [],
        resources: [],
      };
    }
    return { ...document, pausedEndpoints: pausedEndpoints(options) };
  };
  const document = memoOnTable(options.table, build);
  return { document, invalidate: () => core.invalidate() };
}

function errorResponse(statusCodes: ErrorCatalogEntry[]): Record<string, unknown> {
  return {
    description: statusCodes.map((entry) => `${entry.code}: ${entry.description}`).join(' '),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

/**
 * The OpenAPI document with each operation's own error codes (`x-error-codes`, and a response for
 * each of their statuses) and the service's whole table at the root (`x-error-codes`).
 */
function serviceOpenApi(options: ServiceDiscoveryOptions, core: OpenApiSource): OpenApiSource {
  const byCode = new Map(options.errorCatalog.map((entry) => [entry.code, entry]));
  const build = (): OpenApiDocument => {
    const document = structuredClone(core.document()) as OpenApiDocument & Record<string, unknown>;
    const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
    for (const { resource } of options.publications) {
      const operation = paths[toTemplatePath(resource.path)]?.[resource.method.toLowerCase()];
      if (!operation) continue;
      const codes = new Set(Object.keys(resource.errors));
      if (resource.input || isPaid(resource)) codes.add('invalid_request');
      if (takesBody(resource)) codes.add('payload_too_large');
      const entries = [...codes].map((code) => byCode.get(code)!).filter(Boolean);
      operation['x-error-codes'] = entries.map(({ code, status, retryable, description }) => ({
        code,
        status,
        retryable,
        description,
      }));
      const responses = operation['responses'] as Record<string, unknown>;
      const byStatus = new Map<number, ErrorCatalogEntry[]>();
      for (const entry of entries) byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), entry]);
      for (const [status, list] of byStatus) responses[String(status)] ??= errorResponse(list);
    }
    document['x-error-codes'] = options.errorCatalog.map(
      ({ code, status, retryable, description, routes }) => ({
        code,
        status,
        retryable,
        description,
        routes,
      }),
    );
    return document;
  };
  return { document: memoOnTable(options.table, build), invalidate: () => core.invalidate() };
}

/**
 * The catalog, `/.well-known/x402` and OpenAPI of the fee service, from the one route table that
 * drives the gate plus the resources' publications and error codes (`src/resources/registry.ts`).
 */
export function createServiceDiscovery(options: ServiceDiscoveryOptions): Discovery {
  const catalog = createResourceCatalog({
    table: options.table,
    facilitatorUrl: options.facilitatorUrl,
    usdAssets: options.usdAssets,
  });
  const wellKnown = serviceWellKnown(options);
  const openapi = serviceOpenApi(
    options,
    createOpenApiDocument({
      table: options.table,
      facilitatorUrl: options.facilitatorUrl,
      usdAssets: options.usdAssets,
      title: 'Bitcoin fee data service',
      description:
        'Bitcoin fee rates, mempool figures and illustrative savings (free preview), a paid send-or-wait decision and a catalog of paid resources, over x402 v2.',
      freeRoutes: options.freeRoutes,
    }),
  );
  // Built eagerly: a schema that cannot be described fails at start-up, not on the first request.
  catalog.items();
  wellKnown.document();
  openapi.document();
  const respond = createDiscoveryResponder({ catalog, wellKnown, openapi });
  return { catalog, wellKnown, openapi, respond, invalidate: () => respond.invalidate() };
}
