import { checkHttpUrl } from '../config/check-url';
import { throwConfigProblems } from '../errors/config-error';
import { TollboothError } from '../errors/tollbooth-error';
import type { SchemeServer } from '../scheme';
import { compileSignIn, compileSignInOptions } from '../sign-in/compile-sign-in';
import type { SignInOptions } from '../sign-in/types';
import type { Challenge } from './build-challenge';
import { buildRoute } from './build-route';
import { ROUTE_DEFAULTS } from './defaults';
import { normalizeTarget } from './normalize-path';
import { resolveAccepts } from './resolve-accepts';
import { ASCII_PATH, compilePattern, MISTAKEN_PARAM, type Pattern } from './route-pattern';
import { AVAILABILITY, checkRouteSettings, stripSlash, TOOL_METHOD } from './route-settings';
import type { Availability, CompiledRoute, RouteMatch, RoutesConfig, RouteTable } from './types';

export type { Challenge };

export { ROUTE_DEFAULTS, TOOL_METHOD };

export interface CompileRoutesOptions {
  /** The schemes that turn prices into requirements. */
  schemes: readonly SchemeServer[];
  /**
   * Public origin (and optional path prefix) of the API, e.g. `https://api.example.com`. Resource
   * URLs are built from it; without it they are built from each request's own origin.
   */
  baseUrl?: string;
  /** Sign-in-with-x for routes that have a `signIn` policy (docs/sign-in-with-x.md). */
  signIn?: SignInOptions;
}

/** Matches kept per table (see `matchMemo` in {@link compileRoutes}). */
export const MEMO_SIZE = 1024;
/** Longer targets are matched every time, not kept. */
export const MEMO_TARGET_MAX = 512;

/** A match kept for later requests: shared, so nothing may change it. */
function freezeMatch(match: RouteMatch): RouteMatch {
  Object.freeze(match.params);
  Object.freeze(match.target);
  return Object.freeze(match);
}

const KEY = /^(?:([A-Za-z]+|\*)\s+)?(\/\S*)$/;

function allows(route: CompiledRoute, methods: readonly string[]): boolean {
  // A route declared without a method serves every HTTP method, never a tool call.
  return (route.method === '*' && methods[0] !== TOOL_METHOD) || methods.includes(route.method);
}

/** A method-less route under a more specific route's path (`claimedBy`: that route's path key). */
function shadowed(route: CompiledRoute & { pattern: Pattern }, claimedBy: string | undefined): boolean {
  return claimedBy !== undefined && claimedBy !== route.pattern.pathKey;
}

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
  const nonces = compileSignInOptions(options.signIn, problems);

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
    const settings = checkRouteSettings(route, { at, method, path, baseUrl, pattern, problems });
    const requirements = resolveAccepts({
      at,
      accepts: route.accepts,
      x402Version: settings.x402Version,
      schemes,
      problems,
    });
    const signIn = compileSignIn({
      at,
      routeKey: key,
      policy: route.signIn,
      options: options.signIn,
      nonces,
      baseUrl,
      resource: settings.resource,
      x402Version: settings.x402Version,
      tool: method === TOOL_METHOD,
      requirements,
      schemes,
      problems,
    });
    compiled.push(
      buildRoute({
        ...settings,
        signIn,
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

  /**
   * The answers of `match` and `methodsFor` per method and target, so a request asked about twice
   * (the adapter's `isPaid`, then the gate) and the same URL asked again are matched once. Every
   * answer depends only on the method, the target and the table, which is fixed once compiled
   * (availability is read from the route itself). Bounded: the oldest entry goes when one is full,
   * and a target longer than {@link MEMO_TARGET_MAX} is never kept.
   */
  const matchMemo = new Map<string, Map<string, RouteMatch | null>>();
  const methodsMemo = new Map<string, readonly string[]>();
  let matchMemoSize = 0;

  const matchUncached = (upper: string, url: string): RouteMatch | undefined => {
    // HEAD is served by GET handlers in Express, Koa and Fastify: gate it like GET.
    const methods = upper === 'HEAD' ? ['HEAD', 'GET'] : [upper];
    // A tool call matches tool routes only, and an HTTP request never does (nor is shadowed by one).
    const tool = upper === TOOL_METHOD;
    const foreign = (route: CompiledRoute) => (route.method === TOOL_METHOD) !== tool;
    const target = normalizeTarget(url);
    let candidate = compiled.length;
    let scan = allIndexes;
    // A more specific route at this path that serves other methods: a route declared without a
    // method (a price pattern) does not take the methods that route leaves out (405, not 402).
    let claimedBy: string | undefined;
    if (ASCII_PATH.test(target.path)) {
      scan = patternIndexes;
      for (const index of literals.get(target.path.toLowerCase()) ?? []) {
        if (foreign(compiled[index]!)) continue;
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
      if (foreign(route)) continue;
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
    if (!route || foreign(route)) return undefined;
    return { route, path: target.path, params: {}, target, resourceUrl: route.resourceUrl(target) };
  };

  const methodsUncached = (url: string): string[] => {
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
      if (route.method === TOOL_METHOD) continue;
      if (route.method === '*' && shadowed(route, claimedBy)) continue;
      claimedBy ??= route.pattern.pathKey;
      found.add(route.method);
      if (route.method === 'GET') found.add('HEAD');
    }
    return [...found];
  };

  const table: RouteTable = {
    routes: compiled,
    match(method, url) {
      const upper = method.toUpperCase();
      if (url.length > MEMO_TARGET_MAX) return matchUncached(upper, url);
      let byUrl = matchMemo.get(upper);
      const memo = byUrl?.get(url);
      if (memo !== undefined) return memo ?? undefined;
      const found = matchUncached(upper, url);
      if (matchMemoSize >= MEMO_SIZE) {
        // The oldest entry of the first method's map (insertion order): a bound, not an LRU.
        const [oldestMethod, oldest] = matchMemo.entries().next().value as [string, Map<string, unknown>];
        oldest.delete(oldest.keys().next().value as string);
        if (oldest.size === 0) matchMemo.delete(oldestMethod);
        matchMemoSize--;
        byUrl = matchMemo.get(upper);
      }
      if (!byUrl) {
        byUrl = new Map();
        matchMemo.set(upper, byUrl);
      }
      byUrl.set(url, found ? freezeMatch(found) : null);
      matchMemoSize++;
      return found;
    },
    methodsFor(url) {
      if (url.length > MEMO_TARGET_MAX) return methodsUncached(url);
      let methods = methodsMemo.get(url);
      if (methods === undefined) {
        methods = Object.freeze(methodsUncached(url));
        if (methodsMemo.size >= MEMO_SIZE) methodsMemo.delete(methodsMemo.keys().next().value as string);
        methodsMemo.set(url, methods);
      }
      return [...methods];
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
