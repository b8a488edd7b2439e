import { createResourceCatalog, type ResourceCatalog } from './catalog';
import { createOpenApiDocument, type OpenApiOptions, type OpenApiSource } from './openapi';
import type { DiscoveryPaths } from './paths';
import {
  createDiscoveryResponder,
  type DiscoveryResponder,
  type DiscoveryResponderOptions,
} from './responder';
import type { TableSource } from './route-view';
import { createWellKnownDocument, type WellKnownOptions, type WellKnownSource } from './well-known';

export interface DiscoveryOptions {
  /** The route table that drives the gate, or a function returning the current one. */
  table: TableSource;
  /** Public base URL. Default: the table's `baseUrl`. */
  baseUrl?: string;
  facilitatorUrl: string;
  paths?: Partial<DiscoveryPaths>;
  /** Fixed `lastUpdated` of the catalog items; default the time the listing was (re)built. */
  lastUpdated?: Date | string;
  now?: () => Date;
  usdAssets?: Readonly<Record<string, number>>;
  /** Free-text fields of the well-known document. */
  wellKnown?: Omit<WellKnownOptions, 'table' | 'baseUrl' | 'facilitatorUrl' | 'paths' | 'usdAssets'>;
  /** Title, description and free routes of the OpenAPI document. */
  openapi?: Omit<OpenApiOptions, 'table' | 'baseUrl' | 'facilitatorUrl' | 'usdAssets'>;
  /** Cache-Control and CORS of the responder. */
  responder?: Pick<DiscoveryResponderOptions, 'cacheControl' | 'cors'>;
}

/** Everything discovery serves, built from one route table. */
export interface Discovery {
  catalog: ResourceCatalog;
  wellKnown: WellKnownSource;
  openapi: OpenApiSource;
  /** Answers the three discovery paths; `undefined` for anything else. */
  respond: DiscoveryResponder;
  /** Rebuilds every document on next use. */
  invalidate(): void;
}

/**
 * Builds the catalog, the well-known document, the OpenAPI document and their responder from one
 * route table in one call, validating all options at once. Every document is built eagerly, so a
 * schema that cannot be described fails at start-up rather than on the first request.
 *
 * @throws TollboothError `invalid_config`
 * @example
 * const discovery = createDiscovery({ table, facilitatorUrl: 'https://x402.org/facilitator' });
 * // in any adapter: const answer = discovery.respond({ method, url }); if (answer) send(answer);
 */
export function createDiscovery(options: DiscoveryOptions): Discovery {
  const shared = { table: options.table, baseUrl: options.baseUrl, usdAssets: options.usdAssets };
  const catalog = createResourceCatalog({
    ...shared,
    facilitatorUrl: options.facilitatorUrl,
    lastUpdated: options.lastUpdated,
    now: options.now,
  });
  const wellKnown = createWellKnownDocument({
    ...options.wellKnown,
    ...shared,
    facilitatorUrl: options.facilitatorUrl,
    paths: options.paths,
  });
  const openapi = createOpenApiDocument({
    ...options.openapi,
    ...shared,
    facilitatorUrl: options.facilitatorUrl,
  });
  catalog.items();
  wellKnown.document();
  openapi.document();
  const respond = createDiscoveryResponder({
    ...options.responder,
    catalog,
    wellKnown,
    openapi,
    paths: options.paths,
  });
  return { catalog, wellKnown, openapi, respond, invalidate: () => respond.invalidate() };
}
