import { addBazaarExtensions, type RoutesConfig } from '@tollbooth/core';
import type { Profile } from '../config';
import { chat } from './ai-chat';
import { explainBlock } from './ai-explain-block';
import { explainTransaction } from './ai-explain-transaction';
import { feeAdvice } from './ai-fee-advice';
import { broadcast } from './broadcast';
import { feeDecision } from './fee-decision';
import { feeLandscape } from './fee-landscape';
import { nextBlock } from './mining-next-block';
import { observatoryBlockStats } from './observatory-block-stats';
import { observatoryEstimates } from './observatory-estimates';
import { observatoryScoreboard } from './observatory-scoreboard';
import { CATALOG_MAX_TIMEOUT_SECONDS } from './pending';
import { acceptsOf, type PaidResource, type ResourceDeps, routeKey } from './types';

export * from './fee-decision';
export * from './fee-preview';
export * from './pending';
export * from './snapshot-reading';
export * from './types';

/** The ten paid resources of seed section 4.3, in the seed's order. */
export const CATALOG_RESOURCES: readonly PaidResource[] = [
  explainTransaction,
  explainBlock,
  feeAdvice,
  chat,
  broadcast,
  nextBlock,
  observatoryScoreboard,
  observatoryBlockStats,
  observatoryEstimates,
  feeLandscape,
];

/** Every paid resource: the timing decision (seed 4.2) first, then the catalog. */
export const PAID_RESOURCES: readonly PaidResource[] = [feeDecision, ...CATALOG_RESOURCES];

/**
 * The gate's routes: every paid resource plus the price patterns of seed 4.3 (what any other path
 * under them costs), with the bazaar extension in each challenge. The production profile publishes
 * the timing decision paused (seed section 3); the local profile serves it.
 */
export function buildRoutesConfig(deps: ResourceDeps, profile: Profile): RoutesConfig {
  const routes: RoutesConfig = {};
  for (const resource of PAID_RESOURCES) {
    const config = resource.route(deps);
    if (resource === feeDecision && profile === 'production') config.availability = 'paused';
    routes[routeKey(resource)] = config;
  }
  const pattern = (amount: string, description: string) => ({
    accepts: acceptsOf(deps.terms, amount, CATALOG_MAX_TIMEOUT_SECONDS),
    description,
  });
  routes['/api/v1/ai/*'] = pattern('10000', 'AI explainers and advice');
  routes['/api/v1/fees/observatory/*'] = pattern('5000', 'Fee observatory analytics');
  routes['/api/v1/analyst*'] = pattern('50000', 'Multi-step AI analyst');
  return addBazaarExtensions(routes);
}
