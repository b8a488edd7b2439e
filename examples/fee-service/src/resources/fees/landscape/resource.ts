import { defineResource } from '../../kit';
import { NoReadingError } from '../../shared/cached-reading';
import { DASHBOARD_PASS, PRICE_0_005 } from '../../shared/planned';
import { readFeeLandscape } from './read';
import { FeeLandscapeSchema } from './schema';

/**
 * GET /api/v1/fees/landscape (0.005 USDC): every configured estimator's tiers side by side with
 * their spread, the mempool's histogram as bands, the projected blocks, the last blocks' fee
 * percentiles and trend, a named fee environment, the send-wait-v1 signal and what a 140 vB and a
 * 1,000 vB transaction cost per tier (docs/fee-service-contract.md#get-apiv1feeslandscape).
 * Read on demand and kept 10 s; a failed refresh serves the last reading up to 120 s old, marked
 * stale; past that, 503 and nothing is charged.
 */
export const feeLandscape = defineResource({
  method: 'GET',
  path: '/api/v1/fees/landscape',
  description: 'Complete fee landscape analysis',
  price: PRICE_0_005,
  gate: { signIn: DASHBOARD_PASS },
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'landscape', 'analysis'],
    operationId: 'getFeeLandscape',
  },
  output: FeeLandscapeSchema,
  errors: {
    upstream_unavailable: {
      status: 503,
      retryable: true,
      description:
        'The Bitcoin upstream did not answer, or answered figures that break the snapshot rules; nothing was charged.',
    },
  },
  needs: ['bitcoin'],
  unavailable: (capabilities) =>
    capabilities.bitcoin?.mempool
      ? undefined
      : 'needs a mempool.space upstream (MEMPOOL_URL): the histogram, the projected blocks and the recent blocks come from it',
  handler: async ({ capabilities, fail }) => {
    try {
      // The reading is shared with the analyst's step (read.ts): one upstream fetch per 10 s.
      const body = await readFeeLandscape(capabilities);
      return { status: 200, headers: { 'cache-control': 'no-store' }, body };
    } catch (error) {
      if (!(error instanceof NoReadingError)) throw error;
      return fail(
        'upstream_unavailable',
        `no landscape reading recent enough to serve: ${String((error.cause as Error)?.message ?? error.cause)}`,
        { 'retry-after': '10' },
      );
    }
  },
});
