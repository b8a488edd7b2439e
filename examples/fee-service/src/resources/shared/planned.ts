import * as z from 'zod';

/**
 * The 200 body of a resource that is declared but not built yet. Such a resource is published
 * paused (503, no challenge), so this schema only describes what OpenAPI lists until its own lands.
 */
export const PlannedBodySchema = z
  .object({
    data: z.record(z.string(), z.unknown()).describe('Resource payload'),
    meta: z.record(z.string(), z.unknown()).describe('Provenance of the payload'),
  })
  .describe('Resource response (its full schema is published once the resource is built)');

/** Max timeout of every paid resource but the decision (docs/fee-service-contract.md#limits). */
export const CATALOG_MAX_TIMEOUT_SECONDS = 300;

/** 0.01 USDC and 0.005 USDC in atomic units, with the catalog's max timeout. */
export const PRICE_0_01 = { amount: '10000', maxTimeoutSeconds: CATALOG_MAX_TIMEOUT_SECONDS } as const;
export const PRICE_0_005 = { amount: '5000', maxTimeoutSeconds: CATALOG_MAX_TIMEOUT_SECONDS } as const;

/**
 * What one payment for the observatory and the landscape buys: five minutes of signed-in requests
 * (docs/sign-in-with-x.md#the-fee-service). Their data changes once per block, so a dashboard
 * polling them pays once per pass instead of once per poll.
 */
export const DASHBOARD_PASS = { passSeconds: 300 } as const;
