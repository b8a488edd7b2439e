// Builders for tests (the service's own and the cross-package ones in test/): a deployment
// environment, the publications of the registry and the route table they compile to, without
// starting anything.
import { compileRoutes, type RouteTable } from '@tollbooth/core';
import { createExactEvmScheme } from '@tollbooth/evm';
import type { CapabilitySet, PaymentTerms } from '../capabilities';
import { loadConfig, type Profile } from '../config';
import { type AnyResource, type ResourceEnvironment, routeKey } from './kit';
import { buildRoutesConfig, type PricePattern, type Publication, publicationOf } from './publish';
import { PRICE_PATTERNS, RESOURCES } from './registry';

/** The terms of the contract's examples: USDC on Base, a placeholder recipient. */
export const TEST_TERMS: PaymentTerms = {
  network: 'eip155:8453',
  payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  assetName: 'USD Coin',
  assetVersion: '2',
};

/** A deployment environment with the given profile and capabilities (none by default). */
export function buildTestEnvironment(
  options: { profile?: Profile; capabilities?: CapabilitySet; env?: Record<string, string> } = {},
): ResourceEnvironment {
  return {
    config: loadConfig({ PROFILE: options.profile ?? 'local', ...options.env }),
    baseUrl: 'http://127.0.0.1:3000',
    capabilities: options.capabilities ?? {},
  };
}

/**
 * Every resource as its declaration asks to be published once it is built and every capability
 * is present: the complete catalog (the decision paused in the production profile).
 */
export function declaredPublications(
  profile: Profile,
  resources: readonly AnyResource[] = RESOURCES,
): Publication[] {
  return resources.map((resource) => ({
    resource,
    key: routeKey(resource),
    availability: resource.availability?.[profile] ?? 'active',
  }));
}

/** The publications of a deployment, as the service computes them. */
export function publicationsOf(
  env: ResourceEnvironment,
  resources: readonly AnyResource[] = RESOURCES,
): Publication[] {
  return resources.map((resource) => publicationOf(resource, env));
}

/** The sign-in nonce secret of the test route tables. */
export const TEST_SIGN_IN_SECRET = 'fee-service tests: a sign-in nonce secret';

/** Compiles publications into the gate's route table with the real `exact` EVM scheme. */
export function buildTestRouteTable(options: {
  publications: readonly Publication[];
  env?: ResourceEnvironment;
  patterns?: readonly PricePattern[];
  baseUrl?: string;
  terms?: PaymentTerms;
}): RouteTable {
  const env = options.env ?? buildTestEnvironment();
  return compileRoutes(
    buildRoutesConfig(
      options.publications,
      options.patterns ?? PRICE_PATTERNS,
      env,
      options.terms ?? TEST_TERMS,
    ),
    {
      schemes: [createExactEvmScheme()],
      baseUrl: options.baseUrl ?? 'http://127.0.0.1:3000',
      signIn: { secret: TEST_SIGN_IN_SECRET },
    },
  );
}
