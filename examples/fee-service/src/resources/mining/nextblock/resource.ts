import { defineResource } from '../../kit';
import { createCachedReading, freshnessOf, NoReadingError } from '../../shared/cached-reading';
import { PRICE_0_01 } from '../../shared/planned';
import { buildNextBlock } from './build';
import { fetchNextBlockData } from './data';
import { NextBlockSchema } from './schema';

/**
 * GET /api/v1/mining/nextblock (0.01 USDC): the projected next block — from Bitcoin Core's
 * `getblocktemplate` where Core is configured, else mempool.space's first projected block —
 * with its height, expected time, size, fees and subsidy, fee-rate percentiles, the rate needed
 * to get in, its top transactions and how each estimator's fastest rate compares with that
 * entry rate (docs/fee-service-contract.md#get-apiv1miningnextblock). Every field is filled.
 */
export const nextBlock = defineResource({
  method: 'GET',
  path: '/api/v1/mining/nextblock',
  description: 'Next block prediction with fee analysis',
  price: PRICE_0_01,
  discovery: {
    category: 'mining',
    keywords: ['bitcoin', 'mining', 'block', 'prediction'],
    operationId: 'getNextBlock',
  },
  output: NextBlockSchema,
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
    capabilities.bitcoin?.core || capabilities.bitcoin?.mempool
      ? undefined
      : 'needs Bitcoin Core (CORE_RPC_URL) or mempool.space (MEMPOOL_URL): Esplora has no projected block',
  createHandler(env) {
    const { bitcoin, snapshots } = env.capabilities;
    const reading = createCachedReading({ fetch: () => fetchNextBlockData(bitcoin!) });
    return async ({ fail }) => {
      let current: Awaited<ReturnType<typeof reading.read>>;
      try {
        current = await reading.read();
      } catch (error) {
        if (!(error instanceof NoReadingError)) throw error;
        return fail(
          'upstream_unavailable',
          `no next-block reading recent enough to serve: ${String((error.cause as Error)?.message ?? error.cause)}`,
          {
            'retry-after': '10',
          },
        );
      }
      const now = Date.now();
      const freshness = freshnessOf(current, now, {
        tipHeight: current.value.tip.height,
        newestTip: snapshots?.latest()?.tip_height ?? undefined,
      });
      return {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        body: buildNextBlock(current, freshness, now),
      };
    };
  },
});
