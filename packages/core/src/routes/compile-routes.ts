import { TollboothError } from '../errors/tollbooth-error';
import type { PaymentRequirements, PaymentRequirementsV1 } from '../protocol/schemas';
import { V1_NETWORKS } from '../protocol/schemas';
import type { SchemeServer } from '../scheme';
import { type NormalizedTarget, normalizeTarget } from './normalize-path';
import type { Availability, CanonicalRule, RouteConfig, RoutesConfig, SettleOrder } from './types';

/** Defaults of a route's optional settings. */
export const ROUTE_DEFAULTS = {
  scheme: 'exact',
  maxTimeoutSeconds: 60,
  mimeType: 'application/json',
  availability: 'active' as Availability,
  retryAfterSeconds: 60,
  settle: 'after-handler' as SettleOrder,
  x402Version: 2 as 1 | 2,
  /** Challenges cached per resource URL for routes whose URL varies (params, wildcards, no baseUrl). */
  challengeCacheSize: 256,
} as const;

export interface CompileRoutesOptions {
  /** The schemes that turn prices into requirements. */
  schemes: readonly SchemeServer[];
  /**
   * Public origin (and optional path prefix) of the API, e.g. `https://api.example.com`. Resource
   * URLs are built from it; without it they are built from each request's own origin.
   */
  baseUrl?: string;
}

/** A precomputed 402 challenge: the object, its header value and its body bytes. */
export interface Challenge {
  /** The PaymentRequired (v2) or v1 402 body object. Treat as read-only. */
  object: Readonly<Record<string, unknown>>;
  /** `PAYMENT-REQUIRED` header value (standard base64 of the JSON); absent for a v1 route. */
  header?: string;
  /** The JSON body bytes (the same JSON as the header). */
  body: Uint8Array;
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
  get(key: string): CompiledRoute | undefined;
  /** Changes a route's availability at run time. @throws TollboothError if the key is unknown. */
  setAvailability(key: string, availability: Availability): void;
}

const KEY = /^(?:([A-Za-z]+|\*)\s+)?(\/\S*)$/;
const AVAILABILITY: readonly Availability[] = ['active', 'paused', 'retired'];

interface Pattern {
  regex: RegExp;
  params: string[];
  literalLength: number;
  wildcards: number;
  /** The normalised path of a route without params or wildcards (what its regex matches, ignoring case). */
  literal?: string;
}

/** Paths whose case-insensitive regex match is exactly lower-case equality. */
const ASCII_PATH = /^[\x20-\x7e]*$/;

function compilePattern(path: string): Pattern {
  const normalized = normalizeTarget(path.replaceAll('*', '\u0000')).path.replaceAll('\u0000', '*');
  const params: string[] = [];
  let literalLength = 0;
  let wildcards = 0;
  let source = '';
  const segments = normalized.split('/').slice(1);
  segments.forEach((segment, index) => {
    // `/x/*` also matches `/x` itself: fail closed.
    if (segment === '*' && index === segments.length - 1) {
      source += '(?:/.*)?';
      wildcards++;
      return;
    }
    source += '/';
    const param = /^:([A-Za-z_][A-Za-z0-9_]*)$/.exec(segment);
    if (param) {
      params.push(param[1]!);
      source += '([^/]+)';
      return;
    }
    for (const part of segment.split(/(\*)/)) {
      if (part === '*') {
        wildcards++;
        source += '.*';
      } else {
        literalLength += part.length;
        source += part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
      }
    }
  });
  const pattern: Pattern = { regex: new RegExp(`^${source || '/'}$`, 'i'), params, literalLength, wildcards };
  if (params.length === 0 && wildcards === 0) pattern.literal = normalized;
  return pattern;
}

function allows(route: CompiledRoute, methods: readonly string[]): boolean {
  return route.method === '*' || methods.includes(route.method);
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
  if (baseUrl !== undefined && !/^https?:\/\/[^/]+/.test(baseUrl)) {
    problems.push(`baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
  }
  const compiled: Array<CompiledRoute & { pattern: Pattern }> = [];
  const seen = new Map<string, string>();
  let order = 0;

  for (const [key, route] of Object.entries(config)) {
    const at = `route "${key}"`;
    const parsedKey = KEY.exec(key.trim());
    if (!parsedKey) {
      problems.push(`${at}: key must look like "GET /path" (":param" and "*" allowed)`);
      continue;
    }
    const method = (parsedKey[1] ?? '*').toUpperCase();
    const path = parsedKey[2]!;
    const pattern = compilePattern(path);
    const identity = `${method} ${pattern.regex.source}`;
    if (seen.has(identity)) problems.push(`${at}: same method and path as "${seen.get(identity)}"`);
    seen.set(identity, key);
    if (!route || typeof route !== 'object') {
      problems.push(`${at}: config must be an object`);
      continue;
    }
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
    let canonical: CanonicalRule | undefined;
    if (route.canonical === true) {
      if (baseUrl === undefined) problems.push(`${at}: canonical: true needs the baseUrl option`);
      else canonical = { baseUrl };
    } else if (route.canonical && typeof route.canonical === 'object') {
      canonical = { ...route.canonical, baseUrl: stripSlash(route.canonical.baseUrl) };
    }
    if (canonical && (pattern.params.length > 0 || pattern.wildcards > 0)) {
      problems.push(`${at}: a canonical rule needs an exact path (no :params or *)`);
    }

    const requirements: PaymentRequirements[] = [];
    const options_ = Array.isArray(route.accepts) ? route.accepts : route.accepts ? [route.accepts] : [];
    if (options_.length === 0) problems.push(`${at}: accepts needs at least one payment option`);
    options_.forEach((option, i) => {
      const where = `${at} accepts[${i}]`;
      const schemeName = option.scheme ?? ROUTE_DEFAULTS.scheme;
      const maxTimeoutSeconds = option.maxTimeoutSeconds ?? ROUTE_DEFAULTS.maxTimeoutSeconds;
      if (typeof option.network !== 'string' || option.network === '') {
        problems.push(`${where}: network is required`);
        return;
      }
      if (typeof option.payTo !== 'string' || option.payTo === '')
        problems.push(`${where}: payTo is required`);
      if (!Number.isInteger(maxTimeoutSeconds) || maxTimeoutSeconds < 1) {
        problems.push(`${where}: maxTimeoutSeconds must be a positive integer`);
      }
      if (x402Version === 1 && !V1_NAMES[option.network]) {
        problems.push(`${where}: network ${option.network} has no x402 v1 name`);
      }
      const scheme = options.schemes.find(
        (s) => s.scheme === schemeName && s.supportsNetwork(option.network),
      );
      if (!scheme) {
        problems.push(`${where}: no scheme server for ${schemeName} on ${option.network}`);
        return;
      }
      try {
        const price = scheme.resolvePrice(option.price, option.network);
        requirements.push({
          scheme: schemeName,
          network: option.network,
          amount: price.amount,
          asset: price.asset,
          payTo: option.payTo,
          maxTimeoutSeconds,
          extra: { ...(price.extra ?? {}), ...(option.extra ?? {}) },
        });
      } catch (error) {
        problems.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
      }
    });

    compiled.push(
      buildRoute({
        key,
        method,
        path,
        pattern,
        config: route,
        x402Version,
        settle,
        availability,
        retryAfterSeconds,
        canonical,
        requirements,
        baseUrl,
        order: order++,
      }),
    );
  }

  if (problems.length > 0) {
    throw new TollboothError('invalid_config', `invalid routes config:\n- ${problems.join('\n- ')}`, {
      details: { problems },
    });
  }

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
      if (ASCII_PATH.test(target.path)) {
        scan = patternIndexes;
        for (const index of literals.get(target.path.toLowerCase()) ?? []) {
          if (allows(compiled[index]!, methods)) {
            candidate = index;
            break;
          }
        }
      }
      for (const index of scan) {
        if (index > candidate) break;
        const route = compiled[index]!;
        if (!allows(route, methods)) continue;
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

  const build = (resource: string, error: string): Challenge => {
    if (input.x402Version === 1) {
      const object = { x402Version: 1, error, accepts: requirementsV1(resource) };
      return { object, body: Buffer.from(JSON.stringify(object), 'utf8') };
    }
    const info: Record<string, string> = { url: resource };
    if (description) info['description'] = description;
    info['mimeType'] = mimeType;
    const object: Record<string, unknown> = { x402Version: 2, error, resource: info, accepts: requirements };
    if (config.extensions && Object.keys(config.extensions).length > 0)
      object['extensions'] = config.extensions;
    const json = JSON.stringify(object);
    return { object, header: Buffer.from(json, 'utf8').toString('base64'), body: Buffer.from(json, 'utf8') };
  };

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
  return route;
}
