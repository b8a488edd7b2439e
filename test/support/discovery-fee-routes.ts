// The fee service's complete route profile, imported from its resource registry
// (examples/fee-service/src/resources/registry.ts) rather than repeated here: every resource as
// its declaration publishes it once built and given its capabilities (the timing decision paused
// in the production profile, the price patterns listed). The live service publishes a resource
// paused until then; these tests describe the complete catalog the contract lists.
import type { Availability, RoutesConfig } from '@tollbooth/core';
import type { FreeRoute } from '@tollbooth/core/discovery';
import { buildFreeOpenApiRoutes, buildRoutesConfig } from '../../examples/fee-service/src/resources/publish';
import { PRICE_PATTERNS } from '../../examples/fee-service/src/resources/registry';
import {
  buildTestEnvironment,
  declaredPublications,
  TEST_TERMS,
} from '../../examples/fee-service/src/resources/testing';

export const FEE_SERVICE_NETWORK = TEST_TERMS.network;
/** Placeholder recipient of the contract's examples (`<PAY_TO_ADDRESS>`). */
export const FEE_SERVICE_PAY_TO = TEST_TERMS.payTo;

export interface FeeServiceRoutesOptions {
  payTo?: string;
  /** Availability of the timing decision; the production profile publishes it paused. */
  decisionAvailability?: Availability;
}

const env = buildTestEnvironment({ profile: 'production' });

/**
 * The ten paid resources of the contract (active), the timing decision (paused in the production
 * profile) and the price patterns (all listed, the analyst's included), with the bazaar extension.
 */
export function feeServiceRoutes(options: FeeServiceRoutesOptions = {}): RoutesConfig {
  const publications = declaredPublications('production').map((publication) =>
    publication.key === 'GET /api/v1/fees/now' && options.decisionAvailability
      ? { ...publication, availability: options.decisionAvailability }
      : publication,
  );
  const routes = buildRoutesConfig(publications, PRICE_PATTERNS, env, {
    ...TEST_TERMS,
    payTo: options.payTo ?? FEE_SERVICE_PAY_TO,
  });
  for (const pattern of PRICE_PATTERNS) routes[pattern.path]!.availability = 'active';
  // A route's precondition is the resource's own check before the challenge (a fresh snapshot,
  // valid input), asked of this deployment's capabilities; the test environment has none, so it
  // would answer 503 where these tests look at the challenge the catalog describes.
  for (const route of Object.values(routes)) delete route.precondition;
  return routes;
}

/** The free preview, for the OpenAPI document. */
export const FEE_PREVIEW_ROUTE: FreeRoute = buildFreeOpenApiRoutes(
  declaredPublications('production'),
  env,
).find((route) => route.path === '/api/v1/fees/preview')!;

/**
 * What the contract lists for the ten other paid resources (path, method, atomic amount,
 * priceUsd, category): the expected values the documents are checked against.
 */
export const SEED_RESOURCES = [
  ['GET', '/api/v1/ai/explain/transaction/{txid}', '10000', '0.01', 'ai'],
  ['GET', '/api/v1/ai/explain/block/{hash_or_height}', '10000', '0.01', 'ai'],
  ['GET', '/api/v1/ai/fees/advice', '10000', '0.01', 'ai'],
  ['GET', '/api/v1/ai/chat', '10000', '0.01', 'ai'],
  ['POST', '/api/v1/broadcast', '10000', '0.01', 'transactions'],
  ['GET', '/api/v1/mining/nextblock', '10000', '0.01', 'mining'],
  ['GET', '/api/v1/fees/observatory/scoreboard', '5000', '0.005', 'fees'],
  ['GET', '/api/v1/fees/observatory/block-stats', '5000', '0.005', 'fees'],
  ['GET', '/api/v1/fees/observatory/estimates', '5000', '0.005', 'fees'],
  ['GET', '/api/v1/fees/landscape', '5000', '0.005', 'fees'],
] as const;
