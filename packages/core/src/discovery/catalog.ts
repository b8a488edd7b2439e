import { TollboothError } from '../errors/tollbooth-error';
import { type BazaarExtension, createBazaarExtension } from './bazaar';
import { type JsonSchema, type ParameterDescriptor, parameterDescriptors } from './json-schema';
import { memoByTable } from './memo';
import {
  availabilityOf,
  concreteRoutes,
  currentTable,
  isListed,
  type RouteFacts,
  routeFacts,
  type TableSource,
} from './route-view';

/** Paging defaults and bounds of the catalog listing. */
export const CATALOG_DEFAULTS = {
  limit: 100,
  maxLimit: 1000,
  category: 'other',
} as const;

/** `input` of a catalog item's `discoveryInfo`: how to call the resource. */
export interface CatalogInput {
  type: 'http';
  method: string;
  /** Full URL of the resource (a URI template such as `…/transaction/{txid}` for path parameters). */
  resource: string;
  pathParams?: Record<string, ParameterDescriptor>;
  queryParams?: Record<string, ParameterDescriptor>;
  bodyType?: 'json';
  bodyFields?: Record<string, ParameterDescriptor>;
}

/** `output` of a catalog item's `discoveryInfo`. */
export interface CatalogOutput {
  mimeType: string;
  /** JSON Schema of the 200 body, when the route declares one. */
  schema?: JsonSchema;
}

/** One payment option of a catalog item: the route's requirement in both v2 and v1 spelling. */
export interface CatalogAccept {
  scheme: string;
  network: string;
  amount: string;
  /** v1 name of `amount`, always equal to it. */
  maxAmountRequired: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown> & { facilitatorUrl: string };
  /** v1 discovery shape: `input` as in `discoveryInfo` plus `discoverable: true`, `output` the 200 body schema. */
  outputSchema: { input: CatalogInput & { discoverable: true }; output: JsonSchema | null };
}

/** One paid resource of the listing (`docs/discovery.md#the-catalog-listing`). */
export interface CatalogItem {
  resource: string;
  type: 'http';
  x402Version: 2;
  description: string;
  mimeType: string;
  accepts: CatalogAccept[];
  discoveryInfo: { input: CatalogInput; output: CatalogOutput };
  lastUpdated: string;
  metadata: {
    category: string;
    keywords: string[];
    input: CatalogInput;
    description: string;
    output: CatalogOutput;
    extensions: ['bazaar'];
    network: string;
    /** Decimal string, e.g. `'0.01'`; absent when the price is in an asset of unknown USD value. */
    priceUsd?: string;
  };
  /** The same `bazaar` extension the resource's challenge carries. */
  extensions: { bazaar: BazaarExtension };
}

/** The listing body of `GET /discovery/resources`. */
export interface CatalogListing {
  x402Version: 2;
  items: CatalogItem[];
  pagination: { limit: number; offset: number; total: number };
}

/** Query of a listing, as numbers or as the raw strings of a query string. */
export interface CatalogQuery {
  limit?: number | string;
  offset?: number | string;
  /** Only `http` resources exist; any other type lists nothing. */
  type?: string;
  network?: string;
  scheme?: string;
  payTo?: string;
  /** Extension key the resource must carry; only `bazaar` exists. */
  extensions?: string;
}

/**
 * A listing query that cannot be answered: the responder turns it into a 400 with an Error body
 * (`code` `invalid_pagination` or `invalid_query`, never retryable).
 */
export class CatalogQueryError extends TollboothError {
  override readonly name: string = 'CatalogQueryError';
  declare readonly code: 'invalid_pagination' | 'invalid_query';
  constructor(code: 'invalid_pagination' | 'invalid_query', message: string) {
    super(code, message);
  }
}

export interface ResourceCatalogOptions {
  /** The route table that drives the gate, or a function returning the current one. */
  table: TableSource;
  /** Public base URL of the service, e.g. `https://fees.example.com`. Default: the table's `baseUrl`. */
  baseUrl?: string;
  /** Facilitator URL, shown in each requirement's `extra.facilitatorUrl`. */
  facilitatorUrl: string;
  /** A fixed `lastUpdated`; by default the time the listing was (re)built. */
  lastUpdated?: Date | string;
  /** Clock, for the default `lastUpdated`. Default `() => new Date()`. */
  now?: () => Date;
  /** Known USD stablecoins (address → decimals) for `priceUsd` of explicit asset prices. */
  usdAssets?: Readonly<Record<string, number>>;
}

/** The paid-resource catalog. */
export interface ResourceCatalog {
  /**
   * One page of the active, concrete paid resources.
   *
   * @throws CatalogQueryError for a limit or offset that is not a plain non-negative integer,
   *   a limit of 0 or above 1000, or an offset beyond `Number.MAX_SAFE_INTEGER`.
   */
  list(query?: CatalogQuery): CatalogListing;
  /** Every listed item (cached until a route's price or availability changes, or `invalidate()`). */
  items(): readonly CatalogItem[];
  /** Drops the cached items: the next call rebuilds them from the table. */
  invalidate(): void;
}

function descriptorsOrUndefined(
  json: JsonSchema | undefined,
): Record<string, ParameterDescriptor> | undefined {
  return json === undefined ? undefined : parameterDescriptors(json);
}

/** `discoveryInfo.input` of a route. */
export function catalogInputOf(facts: RouteFacts): CatalogInput {
  // A route declared for any method is documented as GET, as in OpenAPI and the bazaar extension.
  const method = facts.method === '*' ? 'GET' : facts.method;
  const input: CatalogInput = { type: 'http', method, resource: facts.resource };
  const pathParams = descriptorsOrUndefined(facts.pathParams);
  if (pathParams) input.pathParams = pathParams;
  const queryParams = descriptorsOrUndefined(facts.queryParams);
  if (queryParams) input.queryParams = queryParams;
  if (facts.body !== undefined) {
    input.bodyType = 'json';
    input.bodyFields = parameterDescriptors(facts.body);
  }
  return input;
}

function buildItem(facts: RouteFacts, facilitatorUrl: string, lastUpdated: string): CatalogItem {
  const input = catalogInputOf(facts);
  const output: CatalogOutput = { mimeType: facts.mimeType };
  if (facts.output) output.schema = facts.output;
  const accepts = facts.route.requirements.map(
    (requirement): CatalogAccept => ({
      scheme: requirement.scheme,
      network: requirement.network,
      amount: requirement.amount,
      maxAmountRequired: requirement.amount,
      asset: requirement.asset,
      payTo: requirement.payTo,
      maxTimeoutSeconds: requirement.maxTimeoutSeconds,
      extra: { ...(requirement.extra ?? {}), facilitatorUrl },
      outputSchema: { input: { ...input, discoverable: true }, output: facts.output ?? null },
    }),
  );
  const metadata: CatalogItem['metadata'] = {
    category: facts.category ?? CATALOG_DEFAULTS.category,
    keywords: facts.keywords,
    input,
    description: facts.description,
    output,
    extensions: ['bazaar'],
    network: facts.route.requirements[0]?.network ?? '',
  };
  if (facts.priceUsd !== undefined) metadata.priceUsd = facts.priceUsd;
  return {
    resource: facts.resource,
    type: 'http',
    x402Version: 2,
    description: facts.description,
    mimeType: facts.mimeType,
    accepts,
    discoveryInfo: { input, output },
    lastUpdated,
    metadata,
    extensions: { bazaar: createBazaarExtension(facts.route) },
  };
}

/** Parses one paging value; returns an error message instead of throwing. */
function parseCount(name: string, value: number | string | undefined, fallback: number): number | string {
  if (value === undefined) return fallback;
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? value : `${name} must be a non-negative integer`;
  }
  if (!/^\d{1,16}$/.test(value))
    return `${name} must be a non-negative integer, got ${JSON.stringify(value)}`;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : `${name} is too large`;
}

/** Validates a listing query and fills its defaults. Reports every problem at once. */
export function parseCatalogQuery(query: CatalogQuery = {}): { limit: number; offset: number } {
  const problems: string[] = [];
  const limit = parseCount('limit', query.limit, CATALOG_DEFAULTS.limit);
  const offset = parseCount('offset', query.offset, 0);
  if (typeof limit === 'string') problems.push(limit);
  else if (limit < 1 || limit > CATALOG_DEFAULTS.maxLimit) {
    problems.push(`limit must be between 1 and ${CATALOG_DEFAULTS.maxLimit}, got ${limit}`);
  }
  if (typeof offset === 'string') problems.push(offset);
  if (problems.length > 0) throw new CatalogQueryError('invalid_pagination', problems.join('; '));
  return { limit: limit as number, offset: offset as number };
}

function matches(item: CatalogItem, query: CatalogQuery): boolean {
  if (query.type !== undefined && query.type !== item.type) return false;
  if (query.extensions !== undefined && !item.metadata.extensions.includes(query.extensions as 'bazaar')) {
    return false;
  }
  const { network, scheme, payTo } = query;
  if (network === undefined && scheme === undefined && payTo === undefined) return true;
  return item.accepts.some(
    (accept) =>
      (network === undefined || accept.network === network) &&
      (scheme === undefined || accept.scheme === scheme) &&
      (payTo === undefined || accept.payTo.toLowerCase() === payTo.toLowerCase()),
  );
}

/**
 * The paid-resource catalog (`docs/discovery.md#the-catalog-listing`), built from the route table: every `active`
 * concrete route (price patterns and paused or retired routes are left out), in table order.
 *
 * @throws TollboothError `invalid_config` for a missing `baseUrl` or `facilitatorUrl`.
 * @example
 * const catalog = createResourceCatalog({ table, baseUrl: 'https://fees.example.com', facilitatorUrl });
 * catalog.list({ limit: '10', offset: '0' }); // { x402Version: 2, items: [...], pagination: {...} }
 */
export function createResourceCatalog(options: ResourceCatalogOptions): ResourceCatalog {
  const { facilitatorUrl } = options;
  const baseUrl = resolveBaseUrl('createResourceCatalog', options.table, options.baseUrl, [
    ...(typeof facilitatorUrl !== 'string' || facilitatorUrl === '' ? ['facilitatorUrl must be a URL'] : []),
  ]);
  const now = options.now ?? (() => new Date());
  const memo = memoByTable(options.table, (table) => {
    const lastUpdated =
      options.lastUpdated === undefined ? now().toISOString() : new Date(options.lastUpdated).toISOString();
    return concreteRoutes(table)
      .filter((route) => availabilityOf(route) === 'active' && isListed(route))
      .map((route) =>
        buildItem(routeFacts(route, { baseUrl, usdAssets: options.usdAssets }), facilitatorUrl, lastUpdated),
      );
  });

  return {
    list(query = {}) {
      const { limit, offset } = parseCatalogQuery(query);
      const selected = memo.get().filter((item) => matches(item, query));
      return {
        x402Version: 2,
        items: selected.slice(offset, offset + limit),
        pagination: { limit, offset, total: selected.length },
      };
    },
    items: () => memo.get(),
    invalidate: () => memo.invalidate(),
  };
}

/**
 * Validates a discovery factory's table and base URL (the table's own `baseUrl` by default),
 * together with the factory's other problems, and throws them all at once.
 *
 * @throws TollboothError `invalid_config`
 */
export function resolveBaseUrl(
  factory: string,
  source: TableSource,
  baseUrl: string | undefined,
  otherProblems: string[] = [],
): string {
  const problems = [...otherProblems];
  let table: ReturnType<typeof currentTable> | undefined;
  try {
    table = currentTable(source);
  } catch (cause) {
    problems.push(`table could not be read: ${(cause as Error).message}`);
  }
  if (table !== undefined && (!table || !Array.isArray(table.routes)))
    problems.push('table must be a route table');
  const base = baseUrl ?? table?.baseUrl;
  if (typeof base !== 'string' || !/^https?:\/\/[^/]+/.test(base)) {
    problems.push('baseUrl must be an absolute http(s) URL (or compile the table with a baseUrl)');
  }
  if (problems.length > 0) throw new TollboothError('invalid_config', `${factory}: ${problems.join('; ')}`);
  return (base as string).replace(/\/+$/, '');
}
