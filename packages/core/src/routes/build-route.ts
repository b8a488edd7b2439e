import { declarePaymentIdentifier, PAYMENT_IDENTIFIER } from '../protocol/payment-identifier';
import type { PaymentRequirements, PaymentRequirementsV1 } from '../protocol/schemas';
import { V1_NETWORKS } from '../protocol/schemas';
import type { CompiledSignIn } from '../sign-in/compile-sign-in';
import { SIGN_IN_EXTENSION } from '../sign-in/proof';
import { buildChallenge, type Challenge } from './build-challenge';
import { ROUTE_DEFAULTS } from './defaults';
import { type NormalizedTarget, normalizeTarget } from './normalize-path';
import type { Pattern } from './route-pattern';
import type { RouteSettings } from './route-settings';
import type { CanonicalRule, CompiledRoute, RouteConfig } from './types';

const V1_NAMES: Record<string, string> = Object.fromEntries(
  Object.entries(V1_NETWORKS).map(([name, caip]) => [caip, name]),
);

export interface BuildRouteInput extends RouteSettings {
  key: string;
  method: string;
  path: string;
  pattern: Pattern;
  config: RouteConfig;
  requirements: PaymentRequirements[];
  baseUrl: string | undefined;
  order: number;
  signIn: CompiledSignIn | undefined;
}

/** One compiled route: its resource URLs, v1 requirements and cached challenges. */
export function buildRoute(input: BuildRouteInput): CompiledRoute & { pattern: Pattern } {
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

  const fixed = input.resource;
  const resourceUrl = (request?: string | NormalizedTarget): string => {
    if (fixed !== undefined) return fixed;
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
    // A sign-in route's challenge carries a fresh nonce: built for every answer, never cached.
    const declared = input.signIn?.declare(resource);
    return buildChallenge({
      x402Version: input.x402Version,
      resource,
      error,
      description,
      mimeType,
      requirements,
      requirementsV1,
      extensions: declared ? { ...extensions, [SIGN_IN_EXTENSION]: declared.body } : extensions,
      headerExtensions: declared
        ? { ...config.headerExtensions, [SIGN_IN_EXTENSION]: declared.header }
        : config.headerExtensions,
    });
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
      if (error !== 'payment_required' || input.signIn) return build(resource, error);
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
  if (input.signIn) (route as { signIn?: CompiledSignIn }).signIn = input.signIn;
  if (input.paymentIdentifier)
    (route as { paymentIdentifier?: { required: boolean } }).paymentIdentifier = input.paymentIdentifier;
  return route;
}
