import { checkNetwork } from '../protocol/caip2';
import type { PaymentRequirements } from '../protocol/schemas';
import { V1_NETWORKS } from '../protocol/schemas';
import type { SchemeServer } from '../scheme';
import { ROUTE_DEFAULTS } from './defaults';
import type { PaymentOption, RouteConfig } from './types';

const V1_NAMES: ReadonlySet<string> = new Set(Object.values(V1_NETWORKS));

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An error's message, for a problem line. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface ResolveAcceptsInput {
  /** How problems name the route, e.g. `route "GET /x"`. */
  at: string;
  accepts: RouteConfig['accepts'];
  x402Version: 1 | 2;
  schemes: readonly SchemeServer[];
  /** Receives one sentence per problem. */
  problems: string[];
}

/**
 * Turns a route's payment options into the server's own requirements (keys in the official
 * order), checking each option whole: CAIP-2 network, a scheme for it, the recipient address as
 * that scheme reads addresses, the price (a positive amount once converted to atomic units), the
 * timeout and `extra`. Every problem is reported; an option with any is left out.
 */
export function resolveAccepts(input: ResolveAcceptsInput): PaymentRequirements[] {
  const { at, accepts, x402Version, schemes, problems } = input;
  const options: unknown[] = Array.isArray(accepts) ? accepts : accepts ? [accepts] : [];
  if (options.length === 0) problems.push(`${at}: accepts needs at least one payment option`);
  const requirements: PaymentRequirements[] = [];
  options.forEach((option, i) => {
    const where = `${at} accepts[${i}]`;
    if (!isPlainObject(option)) {
      problems.push(`${where}: must be an object { network, payTo, price }`);
      return;
    }
    const resolved = resolveOption(option as Partial<PaymentOption>, where, x402Version, schemes, problems);
    if (resolved) requirements.push(resolved);
  });
  return requirements;
}

function resolveOption(
  option: Partial<PaymentOption>,
  where: string,
  x402Version: 1 | 2,
  schemes: readonly SchemeServer[],
  problems: string[],
): PaymentRequirements | undefined {
  const before = problems.length;
  const schemeName = option.scheme ?? ROUTE_DEFAULTS.scheme;
  if (typeof schemeName !== 'string' || schemeName === '') problems.push(`${where}: scheme must be a name`);
  const maxTimeoutSeconds = option.maxTimeoutSeconds ?? ROUTE_DEFAULTS.maxTimeoutSeconds;
  if (!Number.isInteger(maxTimeoutSeconds) || maxTimeoutSeconds < 1) {
    problems.push(`${where}: maxTimeoutSeconds must be a positive integer`);
  }
  if (option.extra !== undefined && !isPlainObject(option.extra)) {
    problems.push(`${where}: extra must be an object`);
  }
  const { network, payTo } = option;
  const networkProblem = checkNetwork('network', network);
  if (networkProblem) problems.push(`${where}: ${networkProblem}`);
  else if (x402Version === 1 && !V1_NAMES.has(network as string)) {
    problems.push(`${where}: network ${network} has no x402 v1 name`);
  }
  if (typeof payTo !== 'string' || payTo === '') problems.push(`${where}: payTo is required`);

  const scheme = networkProblem
    ? undefined
    : schemes.find((s) => s.scheme === schemeName && s.supportsNetwork(network as string));
  if (!networkProblem && !scheme) problems.push(`${where}: no scheme server for ${schemeName} on ${network}`);
  if (!scheme) return undefined;

  if (typeof payTo === 'string' && payTo !== '') {
    const addressProblem = scheme.checkAddress?.(payTo, network as string);
    if (addressProblem) problems.push(`${where}: payTo ${addressProblem}`);
  }
  let price: ReturnType<SchemeServer['resolvePrice']> | undefined;
  if (option.price === undefined || option.price === null || option.price === '') {
    problems.push(`${where}: price is required ("$0.001", 0.001 or { amount, asset })`);
  } else {
    try {
      price = scheme.resolvePrice(option.price, network as string);
      if (!/^\d+$/.test(price.amount) || /^0+$/.test(price.amount)) {
        problems.push(
          `${where}: price ${JSON.stringify(option.price)} is ${price.amount} atomic units: a paid route must cost more than 0 (leave a free route out of the routes)`,
        );
      }
    } catch (error) {
      problems.push(`${where}: ${messageOf(error)}`);
    }
  }
  if (!price || problems.length > before) return undefined;
  return {
    scheme: schemeName,
    network: network as string,
    amount: price.amount,
    asset: price.asset,
    payTo: payTo as string,
    maxTimeoutSeconds,
    extra: { ...(price.extra ?? {}), ...(option.extra ?? {}) },
  };
}
