import { type CatalogQuery, CatalogQueryError, type ResourceCatalog } from './catalog';
import type { OpenApiSource } from './openapi';
import { type DiscoveryPaths, resolvePaths } from './paths';
import type { WellKnownSource } from './well-known';

/** What an adapter tells the responder about a request. */
export interface DiscoveryRequest {
  /** HTTP method (any case). */
  method: string;
  /** Request URL, absolute or origin-form (`/discovery/resources?limit=10`). */
  url: string;
  /** Case-insensitive header lookup, for `If-None-Match` and `X-Request-Id`. Optional. */
  header?(name: string): string | undefined;
  /** Request id for Error bodies. Default: the `X-Request-Id` header, else a random UUID. */
  requestId?: string;
}

/** A response to send as is. Header names are lower-case. */
export interface DiscoveryResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface DiscoveryResponderOptions {
  /** Serves the listing at `paths.catalog` when given. */
  catalog?: ResourceCatalog;
  /** Serves the payment discovery document at `paths.wellKnown` when given. */
  wellKnown?: WellKnownSource;
  /** Serves the OpenAPI document at `paths.openapi` when given. */
  openapi?: OpenApiSource;
  /** Default {@link DEFAULT_DISCOVERY_PATHS}. */
  paths?: Partial<DiscoveryPaths>;
  /** `Cache-Control` of the documents. Default `public, max-age=60`. */
  cacheControl?: string;
  /** Adds `Access-Control-Allow-Origin: *`: the documents are public. Default `true`. */
  cors?: boolean;
}

/**
 * Answers the discovery paths, or `undefined` for any other request (the adapter then lets it
 * through). `OPTIONS` always passes through, so CORS middleware answers preflights.
 */
export type DiscoveryResponder = ((request: DiscoveryRequest) => DiscoveryResponse | undefined) & {
  /** The paths it answers. */
  readonly paths: Readonly<DiscoveryPaths>;
  /** Drops every cached document: the next request rebuilds them from the table. */
  invalidate(): void;
};

/** Defaults of the responder. */
export const DISCOVERY_RESPONDER_DEFAULTS = {
  cacheControl: 'public, max-age=60',
  cors: true,
} as const;

const encoder = new TextEncoder();
const LISTING_KEYS = ['limit', 'offset', 'type', 'network', 'scheme', 'payTo', 'extensions'] as const;

interface Encoded {
  body: Uint8Array;
  etag: string;
}

/** FNV-1a over the bytes: a cheap, stable validator for `ETag` (not a security hash). */
function fnv1a(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (const byte of bytes) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

const ORIGIN = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/;

/** Path and raw query of a request target, without URL parsing: this runs on every request. */
function pathOf(url: string): { path: string; query: string } {
  const origin = ORIGIN.exec(url);
  const rest = origin ? url.slice(origin[0].length) : url;
  const end = rest.search(/[?#]/);
  const path = (end >= 0 ? rest.slice(0, end) : rest) || '/';
  const query = end >= 0 && rest[end] === '?' ? rest.slice(end + 1).split('#')[0]! : '';
  return { path, query };
}

/**
 * A framework-neutral handler for the discovery documents: `GET` / `HEAD` on the catalog
 * listing, `/.well-known/x402` and `/api/openapi.json` (paths configurable). The static documents
 * are serialised once per table state (their sources rebuild when a route's price or
 * availability changes) and carry an `ETag`; `If-None-Match` answers 304. Bad paging answers 400
 * with the Error body (`docs/errors.md`); other methods on these paths answer 405.
 *
 * @example
 * const respond = createDiscoveryResponder({ catalog, wellKnown, openapi });
 * app.use((req, res, next) => {
 *   const answer = respond({ method: req.method, url: req.originalUrl, header: (n) => req.get(n) });
 *   if (!answer) return next();
 *   res.status(answer.status).set(answer.headers).end(Buffer.from(answer.body));
 * });
 */
export function createDiscoveryResponder(options: DiscoveryResponderOptions): DiscoveryResponder {
  const paths = resolvePaths(options.paths);
  const cacheControl = options.cacheControl ?? DISCOVERY_RESPONDER_DEFAULTS.cacheControl;
  const cors = options.cors ?? DISCOVERY_RESPONDER_DEFAULTS.cors;
  const encoded = new WeakMap<object, Encoded>();

  const encode = (document: object): Encoded => {
    let entry = encoded.get(document);
    if (!entry) {
      const body = encoder.encode(JSON.stringify(document));
      entry = { body, etag: `"${fnv1a(body)}-${body.length.toString(16)}"` };
      encoded.set(document, entry);
    }
    return entry;
  };

  const headersFor = (body: Uint8Array, extra: Record<string, string> = {}): Record<string, string> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(body.length),
      ...extra,
    };
    if (cors) headers['access-control-allow-origin'] = '*';
    return headers;
  };

  const answer = (
    request: DiscoveryRequest,
    status: number,
    body: Uint8Array,
    extra?: Record<string, string>,
  ) => ({
    status,
    headers: headersFor(body, extra),
    body: request.method.toUpperCase() === 'HEAD' ? new Uint8Array(0) : body,
  });

  const error = (request: DiscoveryRequest, status: number, code: string, message: string, extra = {}) => {
    const requestId = request.requestId ?? request.header?.('x-request-id') ?? globalThis.crypto.randomUUID();
    const body = encoder.encode(
      JSON.stringify({ error: { code, message, request_id: requestId, retryable: false } }),
    );
    return answer(request, status, body, { 'cache-control': 'no-store', ...extra });
  };

  const serveStatic = (request: DiscoveryRequest, document: object): DiscoveryResponse => {
    const { body, etag } = encode(document);
    const validators = { etag, 'cache-control': cacheControl };
    const match = request.header?.('if-none-match');
    if (match?.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
      const headers: Record<string, string> = { ...validators };
      if (cors) headers['access-control-allow-origin'] = '*';
      return { status: 304, headers, body: new Uint8Array(0) };
    }
    return answer(request, 200, body, validators);
  };

  const serveListing = (request: DiscoveryRequest, catalog: ResourceCatalog, query: URLSearchParams) => {
    const values: CatalogQuery = {};
    const repeated: string[] = [];
    for (const key of LISTING_KEYS) {
      const all = query.getAll(key);
      if (all.length > 1) repeated.push(key);
      else if (all.length === 1) values[key] = all[0];
    }
    if (repeated.length > 0) {
      return error(request, 400, 'invalid_pagination', `${repeated.join(', ')} must be given at most once`);
    }
    try {
      const listing = catalog.list(values);
      return answer(request, 200, encoder.encode(JSON.stringify(listing)), { 'cache-control': cacheControl });
    } catch (cause) {
      if (cause instanceof CatalogQueryError) return error(request, cause.status, cause.code, cause.message);
      throw cause;
    }
  };

  const respond = ((request: DiscoveryRequest): DiscoveryResponse | undefined => {
    const { path, query } = pathOf(request.url);
    const target =
      path === paths.catalog && options.catalog
        ? 'catalog'
        : path === paths.wellKnown && options.wellKnown
          ? 'wellKnown'
          : path === paths.openapi && options.openapi
            ? 'openapi'
            : undefined;
    if (!target) return undefined;
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') return undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      return error(request, 405, 'method_not_allowed', `${method} is not allowed here; use GET`, {
        allow: 'GET, HEAD',
      });
    }
    if (target === 'catalog') return serveListing(request, options.catalog!, new URLSearchParams(query));
    if (target === 'wellKnown') return serveStatic(request, options.wellKnown!.document());
    return serveStatic(request, options.openapi!.document());
  }) as DiscoveryResponder;

  Object.defineProperty(respond, 'paths', { value: Object.freeze({ ...paths }), enumerable: true });
  respond.invalidate = () => {
    options.catalog?.invalidate();
    options.wellKnown?.invalidate();
    options.openapi?.invalidate();
  };
  return respond;
}
