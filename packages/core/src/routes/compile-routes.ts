import { checkHttpUrl } from '../config/check-url';
import { throwConfigProblems } from '../errors/config-error';
import { TollboothError } from '../errors/tollbooth-error';
import { declarePaymentIdentifier, PAYMENT_IDENTIFIER } from '../protocol/payment-identifier';
import type { PaymentRequirements, PaymentRequirementsV1 } from '../protocol/schemas';
import { V1_NETWORKS } from '../protocol/schemas';
import type { SchemeServer } from '../scheme';
import { buildChallenge, type Challenge } from './build-challenge';
import { ROUTE_DEFAULTS } from './defaults';
import { type NormalizedTarget, normalizeTarget } from './normalize-path';
import { resolveAccepts } from './resolve-accepts';
import { ASCII_PATH, compilePattern, MISTAKEN_PARAM, type Pattern } from './route-pattern';
import type { Availability, CanonicalRule, RouteConfig, RoutesConfig, SettleOrder } from './types';

export type { Challenge };

export { ROUTE_DEFAULTS };

export interface CompileRoutesOptions {
  /** The schemes that turn prices into requirements. */
  schemes: readonly SchemeServer[];
  /**
   * Public origin (and optional path prefix) of the API, e.g. `https://api.example.com`. Resource
   * URLs are built from it; without it they are built from each request's own origin.
   */
  baseUrl?: string;
}

/** One paid route, compiled. */
export interface CompiledRoute {
  /** The key as declared, e.g. `GET /api/v1/ai/explain/transaction/:txid`. */
  readonly key: string;
  /** Upper-case method, or `*` for any. */
  readonly method: string;
  /** The declared path pattern, e.g. `/api/v1/ai/*`. */
  readonly path: string;
  /** Whether the path has a `*` wildcard (a price pattern). */
  readonly isPattern: boolean;
  /** Names of the `:params`, in order. */
  readonly params: readonly string[];
  /** Position of the route in the declared config (the table itself is sorted by specificity). */
  readonly order: number;
  readonly config: RouteConfig;
  readonly x402Version: 1 | 2;
  readonly settle: SettleOrder;
  readonly description: string;
  readonly mimeType: string;
  readonly retryAfterSeconds: number;
  /** Current availability; change it with `RouteTable.setAvailability`. */
  readonly availability: Availability;
  /** The canonical-request rule, resolved against `baseUrl`, if the route has one. */
  readonly canonical?: Readonly<CanonicalRule>;
  /** Set when the route speaks the `payment-identifier` extension. */
  readonly paymentIdentifier?: { readonly required: boolean };
  /** The server's own requirements, keys in official order (scheme, network, amount, asset, payTo, maxTimeoutSeconds, extra). */
  readonly requirements: readonly PaymentRequirements[];
  /**
   * Resource URL for a request (absolute URL as received, or that URL already normalised by
   * `normalizeTarget`); without one, `baseUrl + path` (the declared pattern for routes with params
   * or wildcards).
   */
  resourceUrl(request?: string | NormalizedTarget): string;
  /** v1 requirements for a resource URL (v1 repeats the resource inside every requirement). */
  requirementsV1(resourceUrl: string): PaymentRequirementsV1[];
  /** The 402 challenge for a resource URL and error code, cached for `payment_required`. */
  challenge(resourceUrl: string, error?: string): Challenge;
}

/** A request matched to a route. */
export interface RouteMatch {
  route: CompiledRoute;
  /** Decoded, normalised path (case preserved). */
  path: string;
  /** Values of the `:params`, decoded. */
  params: Record<string, string>;
  /** The resource URL of this request. */
  resourceUrl: string;
  /** The target split as received. */
  target: ReturnType<typeof normalizeTarget>;
}

/** The compiled route table: drives the gate and discovery. */
export interface RouteTable {
  /** All routes, most specific first. */
  readonly routes: readonly CompiledRoute[];
  readonly baseUrl?: string;
  /** The most specific route for a method and URL (absolute or origin-form), or `undefined` (free). */
  match(method: string, url: string): RouteMatch | undefined;
  /**
   * The methods paid routes serve at this URL, whatever the request's method (`HEAD` with `GET`),
   * most specific route first; empty when no paid route has this path. A route declared without a
   * method serves every method (`['*']`), except at a path a more specific route serves with its
   * own methods: there it serves none of the others (a price pattern does not challenge a `PUT`
   * to a `POST` route, which answers 405).
   */
  methodsFor(url: string): string[];
  get(key: string): CompiledRoute | undefined;
  /** Changes a route's availability at run time. @throws TollboothError if the key is unknown. */
  setAvailability(key: string, availability: Availability): void;
}

const KEY = /^(?:([A-Za-z]+|\*)\s+)?(\/\S*)$/;
const AVAILABILITY: readonly Availability[] = ['active', 'paused', 'retired'];

function allows(route: CompiledRoute, methods: readonly string[]): boolean {
  return route.method === '*' || methods.includes(route.method);
}

/** A method-less route under a more specific route's path (`claimedBy`: that route's path key). */
function shadowed(route: CompiledRoute & { pattern: Pattern }, claimedBy: string | undefined): boolean {
  return claimedBy !== undefined && claimedBy !== route.pattern.pathKey;
}

function stripSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

const V1_NAMES: Record<string, string> = Object.fromEntries(
  Object.entries(V1_NETWORKS).map(([name, caip]) => [caip, name]),
);

/**
 * Compiles the routes config into a route table: validates every route (all problems reported
 * at once), resolves prices through the schemes and prepares the 402 challenges.
 *
 * @throws TollboothError `invalid_config` listing every problem.
 * @example
 * const table = compileRoutes(
 *   { 'GET /api/v1/fees/now': { accepts: { network: 'eip155:8453', payTo, price: '$0.001' } } },
 *   { schemes: [exactEvm], baseUrl: 'https://api.example.com' },
 * );
 */
export function compileRoutes(config: RoutesConfig, options: CompileRoutesOptions): RouteTable {
  const problems: string[] = [];
  const baseUrl = options.baseUrl === undefined ? undefined : stripSlash(options.baseUrl);
  const baseUrlProblem = baseUrl === undefined ? undefined : checkHttpUrl('baseUrl', options.baseUrl);
  if (baseUrlProblem) problems.push(baseUrlProblem);
  if (!Array.isArray(options.schemes) || options.schemes.length === 0) {
    problems.push('schemes needs at least one scheme server (e.g. createExactEvmScheme())');
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) {
    problems.push('routes must be an object keyed by "METHOD /path"');
  }
  const compiled: Array<CompiledRoute & { pattern: Pattern }> = [];
  const seen = new Map<string, string>();
  const schemes = Array.isArray(options.schemes) ? options.schemes : [];

  for (const [key, route] of Object.entries(config ?? {})) {
    const at = `route "${key}"`;
    const parsedKey = KEY.exec(key.trim());
    if (!parsedKey) {
      problems.push(`${at}: key must look like "GET /path" (":param" and "*" allowed)`);
      continue;
    }
    const method = (parsedKey[1] ?? '*').toUpperCase();
    const path = parsedKey[2]!;
    const mistaken = path.split('/').find((segment) => MISTAKEN_PARAM.test(segment));
    if (mistaken) {
      problems.push(
        `${at}: "${mistaken}" is no param (a param is a whole segment ":name" of letters, digits and _); as written it matches only its own text and the resource would be free`,
      );
    }
    const pattern = compilePattern(path);
    const identity = `${method} ${pattern.pathKey}`;
    if (seen.has(identity)) problems.push(`${at}: same method and path as "${seen.get(identity)}"`);
    seen.set(identity, key);
    if (!route || typeof route !== 'object') {
      problems.push(`${at}: config must be an object`);
      continue;
    }
    const settings = checkRouteSettings(route, { at, baseUrl, pattern, problems });
    const requirements = resolveAccepts({
      at,
      accepts: route.accepts,
      x402Version: settings.x402Version,
      schemes,
      problems,
    });
    compiled.push(
      buildRoute({
        ...settings,
        key,
        method,
        path,
        pattern,
        config: route,
        requirements,
        baseUrl,
        order: compiled.length,
      }),
    );
  }

  throwConfigProblems('routes config', problems);

  // Most specific first: more literal characters, then fewer wildcards, then fewer params.
  compiled.sort(
    (a, b) =>
      b.pattern.literalLength - a.pattern.literalLength ||
      a.pattern.wildcards - b.pattern.wildcards ||
      a.pattern.params.length - b.pattern.params.length ||
      (a.method === '*' ? 1 : 0) - (b.method === '*' ? 1 : 0) ||
      a.order - b.order,
  );
  const byKey = new Map(compiled.map((route) => [route.key, route]));
  // Routes without params or wildcards are looked up by path (lower-cased: their regexes ignore
  // case), so matching does not slow down with the number of routes; only pattern routes that
  // sort before the literal candidate are tried, which keeps the most-specific-first order.
  const literals = new Map<string, number[]>();
  const patternIndexes: number[] = [];
  const allIndexes = compiled.map((_, index) => index);
  compiled.forEach((route, index) => {
    const literal = route.pattern.literal;
    if (literal === undefined || !ASCII_PATH.test(literal)) {
      patternIndexes.push(index);
      return;
    }
    const key = literal.toLowerCase();
    const list = literals.get(key);
    if (list) list.push(index);
    else literals.set(key, [index]);
  });

  const table: RouteTable = {
    routes: compiled,
    match(method, url) {
      const upper = method.toUpperCase();
      // HEAD is served by GET handlers in Express, Koa and Fastify: gate it like GET.
      const methods = upper === 'HEAD' ? ['HEAD', 'GET'] : [upper];
      const target = normalizeTarget(url);
      let candidate = compiled.length;
      let scan = allIndexes;
      // A more specific route at this path that serves other methods: a route declared without a
      // method (a price pattern) does not take the methods that route leaves out (405, not 402).
      let claimedBy: string | undefined;
      if (ASCII_PATH.test(target.path)) {
        scan = patternIndexes;
        for (const index of literals.get(target.path.toLowerCase()) ?? []) {
          if (allows(compiled[index]!, methods)) {
            candidate = index;
            break;
          }
          claimedBy ??= compiled[index]!.pattern.pathKey;
        }
      }
      for (const index of scan) {
        if (index > candidate) break;
        const route = compiled[index]!;
        if (!allows(route, methods) || (route.method === '*' && shadowed(route, claimedBy))) {
          if (claimedBy === undefined && route.pattern.regex.test(target.path)) {
            claimedBy = route.pattern.pathKey;
          }
          continue;
        }
        const found = route.pattern.regex.exec(target.path);
        if (!found) continue;
        const params: Record<string, string> = {};
        route.pattern.params.forEach((name, i) => {
          params[name] = found[i + 1] ?? '';
        });
        return { route, path: target.path, params, target, resourceUrl: route.resourceUrl(target) };
      }
      const route = compiled[candidate];
      if (!route) return undefined;
      return { route, path: target.path, params: {}, target, resourceUrl: route.resourceUrl(target) };
    },
    methodsFor(url) {
      const target = normalizeTarget(url);
      const matching: number[] = [];
      let scan = allIndexes;
      if (ASCII_PATH.test(target.path)) {
        scan = patternIndexes;
        matching.push(...(literals.get(target.path.toLowerCase()) ?? []));
      }
      for (const index of scan) {
        if (compiled[index]!.pattern.regex.test(target.path)) matching.push(index);
      }
      matching.sort((a, b) => a - b);
      const found = new Set<string>();
      let claimedBy: string | undefined;
      for (const index of matching) {
        const route = compiled[index]!;
        if (route.method === '*' && shadowed(route, claimedBy)) continue;
        claimedBy ??= route.pattern.pathKey;
        found.add(route.method);
        if (route.method === 'GET') found.add('HEAD');
      }
      return [...found];
    },
    get: (key) => byKey.get(key),
    setAvailability(key, availability) {
      const route = byKey.get(key);
      if (!route) throw new TollboothError('invalid_config', `no paid route "${key}"`);
      if (!AVAILABILITY.includes(availability)) {
        throw new TollboothError('invalid_config', `availability must be one of ${AVAILABILITY.join(', ')}`);
      }
      (route as { availability: Availability }).availability = availability;
    },
  };
  if (baseUrl !== undefined) (table as { baseUrl?: string }).baseUrl = baseUrl;
  return table;
}

type RouteSettings = Pick<
  BuildRouteInput,
  'x402Version' | 'settle' | 'availability' | 'retryAfterSeconds' | 'canonical' | 'paymentIdentifier'
>;

/** Checks a route's own settings (everything but `accepts`), with their defaults filled in. */
function checkRouteSettings(
  route: RouteConfig,
  context: { at: string; baseUrl: string | undefined; pattern: Pattern; problems: string[] },
): RouteSettings {
  const { at, baseUrl, pattern, problems } = context;
  const x402Version = route.x402Version ?? ROUTE_DEFAULTS.x402Version;
  if (x402Version !== 1 && x402Version !== 2) problems.push(`${at}: x402Version must be 1 or 2`);
  const availability = route.availability ?? ROUTE_DEFAULTS.availability;
  if (!AVAILABILITY.includes(availability)) {
    problems.push(`${at}: availability must be one of ${AVAILABILITY.join(', ')}`);
  }
  const settle = route.settle ?? ROUTE_DEFAULTS.settle;
  if (settle !== 'after-handler' && settle !== 'before-handler') {
    problems.push(`${at}: settle must be "after-handler" or "before-handler"`);
  }
  const retryAfterSeconds = route.retryAfterSeconds ?? ROUTE_DEFAULTS.retryAfterSeconds;
  if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0) {
    problems.push(`${at}: retryAfterSeconds must be a non-negative integer`);
  }
  for (const name of ['description', 'mimeType'] as const) {
    if (route[name] !== undefined && typeof route[name] !== 'string')
      problems.push(`${at}: ${name} must be a string`);
  }
  for (const name of ['extensions', 'headerExtensions'] as const) {
    const value = route[name];
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      problems.push(`${at}: ${name} must be an object keyed by extension name`);
    }
  }
  let canonical: CanonicalRule | undefined;
  if (route.canonical === true) {
    if (baseUrl === undefined) problems.push(`${at}: canonical: true needs the baseUrl option`);
    else canonical = { baseUrl };
  } else if (route.canonical && typeof route.canonical === 'object') {
    const urlProblem = checkHttpUrl('canonical.baseUrl', route.canonical.baseUrl);
    if (urlProblem) problems.push(`${at}: ${urlProblem}`);
    else canonical = { ...route.canonical, baseUrl: stripSlash(route.canonical.baseUrl) };
  } else if (route.canonical !== undefined && route.canonical !== false) {
    problems.push(`${at}: canonical must be true, false or { baseUrl, allowQuery?, checkOrigin? }`);
  }
  if (canonical && (pattern.params.length > 0 || pattern.wildcards > 0)) {
    problems.push(`${at}: a canonical rule needs an exact path (no :params or *)`);
  }
  const paymentIdentifier = checkPaymentIdentifier(route, at, x402Version, problems);
  const settings: RouteSettings = {
    x402Version,
    settle,
    availability,
    retryAfterSeconds,
    canonical,
    paymentIdentifier,
  };
  return settings;
}

/** The route's `paymentIdentifier` option, resolved; `undefined` when the route does not speak it. */
function checkPaymentIdentifier(
  route: RouteConfig,
  at: string,
  x402Version: number,
  problems: string[],
): { required: boolean } | undefined {
  // Declared by hand, the extension would be advertised while the gate ignores identifiers: a
  // payer's retry under its identifier would be charged again. Refused with or without the option.
  const declared = route.extensions?.[PAYMENT_IDENTIFIER] ?? route.headerExtensions?.[PAYMENT_IDENTIFIER];
  if (declared !== undefined)
    problems.push(
      `${at}: declare ${PAYMENT_IDENTIFIER} with the paymentIdentifier option, not in extensions`,
    );
  const option = route.paymentIdentifier;
  if (option === undefined || option === false) return undefined;
  let required = false;
  if (option !== true) {
    if (typeof option !== 'object' || option === null || Array.isArray(option)) {
      problems.push(`${at}: paymentIdentifier must be true, false or { required?: boolean }`);
      return undefined;
    }
    if (option.required !== undefined && typeof option.required !== 'boolean')
      problems.push(`${at}: paymentIdentifier.required must be a boolean`);
    required = option.required === true;
  }
  if (x402Version !== 2) problems.push(`${at}: paymentIdentifier is an x402 v2 extension (x402Version is 1)`);
  return { required };
}

interface BuildRouteInput {
  key: string;
  method: string;
  path: string;
  pattern: Pattern;
  config: RouteConfig;
  x402Version: 1 | 2;
  settle: SettleOrder;
  availability: Availability;
  retryAfterSeconds: number;
  canonical: CanonicalRule | undefined;
  paymentIdentifier: { required: boolean } | undefined;
  requirements: PaymentRequirements[];
  baseUrl: string | undefined;
  order: number;
}

function buildRoute(input: BuildRouteInput): CompiledRoute & { pattern: Pattern } {
  const { config, requirements, baseUrl, path } = input;
  const description = config.description ?? '';
  const mimeType = config.mimeType ?? ROUTE_DEFAULTS.mimeType;
  const varies = input.pattern.params.length > 0 || input.pattern.wildcards > 0;
  const cache = new Map<string, Challenge>();
  const extensions = input.paymentIdentifier
    ? {
        ...config.extensions,
        [PAYMENT_IDENTIFIER]: declarePaymentIdentifier(input.paymentIdentifier.required),
      }
    : config.extensions;

  const resourceUrl = (request?: string | NormalizedTarget): string => {
    if (request === undefined) return `${baseUrl ?? ''}${path}`;
    const target = typeof request === 'string' ? normalizeTarget(request) : request;
    return `${baseUrl ?? target.origin ?? ''}${varies ? target.path : path}`;
  };

  const requirementsV1 = (resource: string): PaymentRequirementsV1[] =>
    requirements.map((r) => ({
      scheme: r.scheme,
      network: V1_NAMES[r.network] ?? r.network,
      maxAmountRequired: r.amount,
      resource,
      description,
      mimeType,
      payTo: r.payTo,
      maxTimeoutSeconds: r.maxTimeoutSeconds,
      asset: r.asset,
      extra: r.extra,
    }));

  const build = (resource: string, error: string): Challenge =>
    buildChallenge({
      x402Version: input.x402Version,
      resource,
      error,
      description,
      mimeType,
      requirements,
      requirementsV1,
      extensions,
      headerExtensions: config.headerExtensions,
    });

  const route = {
    key: input.key,
    method: input.method,
    path,
    isPattern: input.pattern.wildcards > 0,
    params: input.pattern.params,
    config,
    x402Version: input.x402Version,
    settle: input.settle,
    description,
    mimeType,
    retryAfterSeconds: input.retryAfterSeconds,
    availability: input.availability,
    requirements,
    resourceUrl,
    requirementsV1,
    challenge(resource: string, error = 'payment_required'): Challenge {
      if (error !== 'payment_required') return build(resource, error);
      let challenge = cache.get(resource);
      if (!challenge) {
        challenge = build(resource, error);
        if (cache.size >= ROUTE_DEFAULTS.challengeCacheSize)
          cache.delete(cache.keys().next().value as string);
        cache.set(resource, challenge);
      }
      return challenge;
    },
    pattern: input.pattern,
    order: input.order,
  } satisfies CompiledRoute & { pattern: Pattern };
  if (input.canonical) (route as { canonical?: CanonicalRule }).canonical = input.canonical;
  if (input.paymentIdentifier)
    (route as { paymentIdentifier?: { required: boolean } }).paymentIdentifier = input.paymentIdentifier;
  return route;
}
