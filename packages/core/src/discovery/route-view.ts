import { TollboothError } from '../errors/tollbooth-error';
import { fromAtomicAmount, toAtomicAmount } from '../protocol/money';
import type { PaymentRequirements } from '../protocol/schemas';
import type { Availability, PaymentOption, RouteConfig } from '../routes/types';
import { type JsonSchema, objectMembers, toJsonSchema } from './json-schema';

/**
 * What discovery reads from a compiled route. The route table of `compileRoutes` satisfies it;
 * any object of this shape works, so discovery does not depend on how routes are compiled.
 */
export interface DiscoverableRoute {
  /** `"GET /api/v1/fees/now"`. */
  readonly key: string;
  /** Upper-case method, or `*` for any. */
  readonly method: string;
  /** The declared path: `:name` segments are parameters, `*` makes it a price pattern. */
  readonly path: string;
  /** True for a price pattern (a path with `*`): priced, but not a listable resource. */
  readonly isPattern: boolean;
  readonly config: RouteConfig;
  /** The resolved requirements, one per payment option. */
  readonly requirements: readonly PaymentRequirements[];
  /** Live availability, when the table keeps it apart from `config.availability`. */
  readonly availability?: Availability;
}

/** A route table as discovery reads it (`compileRoutes` returns one). */
export interface DiscoverableTable {
  readonly routes: readonly DiscoverableRoute[];
  /** Public base URL the table was compiled with; discovery's default `baseUrl`. */
  readonly baseUrl?: string;
}

/**
 * The table discovery documents: a table, or a function returning the current one (for a service
 * that recompiles its table when a price changes).
 */
export type TableSource = DiscoverableTable | (() => DiscoverableTable);

/** The tables of sources that hold tool routes, without them (one view per table, so caches hold). */
const withoutTools = new WeakMap<DiscoverableTable, DiscoverableTable>();

/**
 * Reads the current table of a source, as discovery documents it: HTTP routes only. A paid MCP
 * tool's route (`TOOL /<name>`) is listed by its MCP server's `tools/list`, not by these documents.
 */
export function currentTable(source: TableSource): DiscoverableTable {
  const table = typeof source === 'function' ? source() : source;
  if (!Array.isArray(table?.routes) || !table.routes.some((route) => route.method === 'TOOL')) return table;
  let view = withoutTools.get(table);
  if (!view) {
    view = Object.create(table, {
      routes: { value: table.routes.filter((route) => route.method !== 'TOOL'), enumerable: true },
    }) as DiscoverableTable;
    withoutTools.set(table, view);
  }
  return view;
}

/**
 * A string that changes whenever anything discovery shows changes: the table object, a route's
 * availability or a requirement. Cheap (one pass over the routes), so cached documents are
 * checked against it on every request and rebuilt after `setAvailability` or a recompiled table
 * without anyone calling `invalidate()`.
 */
export function tableFingerprint(table: DiscoverableTable): string {
  let out = '';
  for (const route of table.routes) {
    out += `${route.key}|${availabilityOf(route)}|`;
    for (const r of route.requirements)
      out += `${r.scheme},${r.network},${r.amount},${r.asset},${r.payTo},${r.maxTimeoutSeconds};`;
    out += '\n';
  }
  return out;
}

/** Identity of table objects, so a recompiled table with equal routes still counts as new. */
const tableIds = new WeakMap<object, number>();
let nextTableId = 0;
export function tableId(table: DiscoverableTable): number {
  let id = tableIds.get(table);
  if (id === undefined) {
    id = nextTableId++;
    tableIds.set(table, id);
  }
  return id;
}

/** Assets whose atomic units are USD cents-and-fractions: address (lower-case) → decimals. */
export const DEFAULT_USD_ASSETS: Readonly<Record<string, number>> = {
  // USDC on Base (eip155:8453) and Base Sepolia (eip155:84532), 6 decimals.
  '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913': 6,
  '0x036cbd53842c5426634e7929541ec2318f3dcf7e': 6,
};

const PARAM_SEGMENT = /^:([A-Za-z_][A-Za-z0-9_]*)$/;

/** The live availability of a route; `active` unless configured otherwise. */
export function availabilityOf(route: DiscoverableRoute): Availability {
  return route.availability ?? route.config.availability ?? 'active';
}

/** Names of the `:name` segments of a declared path, in order. */
export function pathParamNames(path: string): string[] {
  const names: string[] = [];
  for (const segment of path.split('/')) {
    const match = PARAM_SEGMENT.exec(segment);
    if (match) names.push(match[1]!);
  }
  return names;
}

/**
 * The declared path as a URI template: `/tx/:txid` → `/tx/{txid}` (RFC 6570 level 1, the form
 * OpenAPI paths use and the contract's paid-endpoint patterns are written in).
 */
export function toTemplatePath(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      const match = PARAM_SEGMENT.exec(segment);
      return match ? `{${match[1]}}` : segment;
    })
    .join('/');
}

/** `baseUrl` without trailing slashes, joined with a path that starts with `/`. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
}

function firstOption(config: RouteConfig): PaymentOption | undefined {
  return Array.isArray(config.accepts) ? config.accepts[0] : config.accepts;
}

/** A decimal in its shortest exact form: `'0.010'` → `'0.01'`. */
function normalizeDecimal(value: string | number): string {
  return fromAtomicAmount(toAtomicAmount(value, 18), 18);
}

/**
 * The route's price in USD as a decimal string (`'0.01'`): the declared USD price of its first
 * payment option, or, for an explicit asset amount, the amount in a known USD stablecoin.
 * `undefined` when neither applies.
 */
export function priceUsdOf(
  route: DiscoverableRoute,
  usdAssets: Readonly<Record<string, number>> = DEFAULT_USD_ASSETS,
): string | undefined {
  const option = firstOption(route.config);
  if (option && (typeof option.price === 'string' || typeof option.price === 'number')) {
    return normalizeDecimal(option.price);
  }
  const requirement = route.requirements[0];
  if (!requirement) return undefined;
  const decimals = usdAssets[requirement.asset.toLowerCase()];
  return decimals === undefined ? undefined : fromAtomicAmount(requirement.amount, decimals);
}

/** Everything discovery documents about one route, derived from its configuration. */
export interface RouteFacts {
  route: DiscoverableRoute;
  method: string;
  /** Declared path, e.g. `/api/v1/ai/explain/transaction/:txid`. */
  path: string;
  /** URI-template path, e.g. `/api/v1/ai/explain/transaction/{txid}`. */
  templatePath: string;
  /** Full resource URL (a URI template when the path has parameters). */
  resource: string;
  description: string;
  mimeType: string;
  category: string | undefined;
  keywords: string[];
  operationId: string | undefined;
  priceUsd: string | undefined;
  availability: Availability;
  /** Object JSON Schemas of each request part the route takes (absent when it takes none). */
  pathParams: JsonSchema | undefined;
  queryParams: JsonSchema | undefined;
  body: JsonSchema | undefined;
  /** JSON Schema of the 200 body, when declared. */
  output: JsonSchema | undefined;
}

/** Options shared by everything that derives facts from routes. */
export interface FactsOptions {
  baseUrl: string;
  usdAssets?: Readonly<Record<string, number>>;
}

function hasMembers(json: JsonSchema | undefined): json is JsonSchema {
  return json !== undefined && Object.keys(objectMembers(json).properties).length > 0;
}

/**
 * Derives the documented facts of a route. Path parameters come from the `:name` segments and are
 * described by `discovery.input.pathParams` when given (a segment it does not describe is still
 * documented, as a required string).
 *
 * @throws TollboothError `invalid_config` when a discovery schema cannot be converted.
 */
export function routeFacts(route: DiscoverableRoute, options: FactsOptions): RouteFacts {
  const discovery = route.config.discovery ?? {};
  const input = discovery.input ?? {};
  const names = pathParamNames(route.path);

  let pathParams: JsonSchema | undefined;
  if (names.length > 0) {
    const declared = input.pathParams === undefined ? undefined : toJsonSchema(input.pathParams, 'input');
    const { properties } = objectMembers(declared);
    const unknown = Object.keys(properties).filter((name) => !names.includes(name));
    if (unknown.length > 0) {
      throw new TollboothError(
        'invalid_config',
        `discovery: route "${route.key}" describes path parameters ${unknown.join(', ')} that its path does not have`,
      );
    }
    const merged: Record<string, JsonSchema> = {};
    for (const name of names) merged[name] = properties[name] ?? { type: 'string', description: name };
    pathParams = { type: 'object', properties: merged, required: names };
  }
  const queryParams = input.queryParams === undefined ? undefined : toJsonSchema(input.queryParams, 'input');
  const body = input.body === undefined ? undefined : toJsonSchema(input.body, 'input');
  const output = discovery.output === undefined ? undefined : toJsonSchema(discovery.output, 'output');
  const templatePath = toTemplatePath(route.path);

  return {
    route,
    method: route.method.toUpperCase(),
    path: route.path,
    templatePath,
    resource: joinUrl(options.baseUrl, templatePath),
    description: route.config.description ?? '',
    mimeType: route.config.mimeType ?? 'application/json',
    category: discovery.category,
    keywords: [...(discovery.keywords ?? [])],
    operationId: discovery.operationId,
    priceUsd: priceUsdOf(route, options.usdAssets),
    availability: availabilityOf(route),
    pathParams,
    queryParams: hasMembers(queryParams) ? queryParams : undefined,
    body,
    output,
  };
}

/** Declaration order of a route when the table records it (`compileRoutes` sorts by specificity). */
function orderOf(route: DiscoverableRoute, index: number): number {
  const order = (route as { order?: unknown }).order;
  return typeof order === 'number' ? order : index;
}

/** The routes of a table in declaration order (the order the contract's tables list them). */
export function routesInOrder(table: DiscoverableTable): DiscoverableRoute[] {
  return table.routes
    .map((route, index) => ({ route, order: orderOf(route, index) }))
    .sort((a, b) => a.order - b.order)
    .map(({ route }) => route);
}

/** The concrete (non-pattern) routes of a table, in declaration order. */
export function concreteRoutes(table: DiscoverableTable): DiscoverableRoute[] {
  return routesInOrder(table).filter((route) => !route.isPattern);
}

/** Whether a concrete route is listed in the catalog and the well-known `resources` (default true). */
export function isListed(route: DiscoverableRoute): boolean {
  return route.config.discovery?.listed !== false;
}

/** Whether a concrete path falls under a price pattern (`*` matches any run of characters). */
export function patternCovers(pattern: string, path: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(path);
}
