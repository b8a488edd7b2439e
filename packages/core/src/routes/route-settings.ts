import { checkHttpUrl } from '../config/check-url';
import { PAYMENT_IDENTIFIER } from '../protocol/payment-identifier';
import { ROUTE_DEFAULTS } from './defaults';
import type { Pattern } from './route-pattern';
import type { Availability, CanonicalRule, RouteConfig, SettleOrder } from './types';

/**
 * The method of a paid MCP tool's route (`TOOL /<tool name>`): only a tool call's request view
 * carries it (no HTTP parser accepts it), and only it matches these routes.
 */
export const TOOL_METHOD = 'TOOL';
/** A tool route's path: `/` and an MCP tool name (letters, digits, `_`, `-`, `.`, `/`; 1 to 128). */
const TOOL_PATH = /^\/[A-Za-z0-9_.\-/]{1,128}$/;
export const AVAILABILITY: readonly Availability[] = ['active', 'paused', 'retired'];

export function stripSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

/** A route's own settings (everything but `accepts`), checked, with their defaults filled in. */
export interface RouteSettings {
  x402Version: 1 | 2;
  settle: SettleOrder;
  availability: Availability;
  retryAfterSeconds: number;
  canonical: CanonicalRule | undefined;
  paymentIdentifier: { required: boolean } | undefined;
  /** The route's fixed resource URL (`resource`, or a tool route's `mcp://tool/<name>`), if it has one. */
  resource: string | undefined;
}

/** Checks a route's own settings (everything but `accepts`), with their defaults filled in. */
export function checkRouteSettings(
  route: RouteConfig,
  context: {
    at: string;
    method: string;
    path: string;
    baseUrl: string | undefined;
    pattern: Pattern;
    problems: string[];
  },
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
  if (route.acceptV1Payments !== undefined && typeof route.acceptV1Payments !== 'boolean')
    problems.push(`${at}: acceptV1Payments must be a boolean`);
  if (route.reserveBalance !== undefined && typeof route.reserveBalance !== 'boolean')
    problems.push(`${at}: reserveBalance must be a boolean`);
  else if (route.reserveBalance === true && settle === 'before-handler')
    problems.push(
      `${at}: reserveBalance is for a route that settles after its handler (this one settles first)`,
    );
  const paymentIdentifier = checkPaymentIdentifier(route, at, x402Version, problems);
  const resource = checkResource(route, context, canonical !== undefined);
  return { x402Version, settle, availability, retryAfterSeconds, canonical, paymentIdentifier, resource };
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

/**
 * The route's fixed resource URL: `resource` as declared (an exact path only), or a tool route's
 * default `mcp://tool/<name>`. A tool route needs an exact path that is an MCP tool name and no
 * canonical rule (a tool call has no URL to check).
 */
function checkResource(
  route: RouteConfig,
  context: { at: string; method: string; path: string; pattern: Pattern; problems: string[] },
  canonical: boolean,
): string | undefined {
  const { at, method, path, pattern, problems } = context;
  const exact = pattern.params.length === 0 && pattern.wildcards === 0;
  if (method === TOOL_METHOD) {
    if (!TOOL_PATH.test(path))
      problems.push(
        `${at}: a tool route's path is "/" and the tool name (A-Z, a-z, 0-9, _, -, ., /; 1 to 128)`,
      );
    if (canonical) problems.push(`${at}: a tool route has no URL to hold to a canonical rule`);
  }
  if (route.resource === undefined) return method === TOOL_METHOD ? `mcp://tool${path}` : undefined;
  if (typeof route.resource !== 'string' || !URL.canParse(route.resource)) {
    problems.push(`${at}: resource must be an absolute URL (https://…, mcp://…)`);
    return undefined;
  }
  if (!exact) problems.push(`${at}: resource names one URL, so the path must be exact (no :params or *)`);
  return route.resource;
}
