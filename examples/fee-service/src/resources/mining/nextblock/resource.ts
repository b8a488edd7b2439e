import { defineResource } from '../../kit';
import { NoReadingError } from '../../shared/cached-reading';
import { PRICE_0_01 } from '../../shared/planned';
import { readNextBlock } from './read';
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
  handler: async ({ capabilities, fail }) => {
    try {
      // The reading is shared with the analyst's step (read.ts): one upstream fetch per 10 s.
      const body = await readNextBlock(capabilities);
      return { status: 200, headers: { 'cache-control': 'no-store' }, body };
    } catch (error) {
      if (!(error instanceof NoReadingError)) throw error;
      return fail(
        'upstream_unavailable',
        `no next-block reading recent enough to serve: ${String((error.cause as Error)?.message ?? error.cause)}`,
        { 'retry-after': '10' },
      );
    }
  },
});
