import * as z from 'zod';
import { blockProse } from '../../../analysis/block/prose';
import { writeProse } from '../../../capabilities/language-model/prose';
import { defineResource } from '../../kit';
import { BlockRefSchema } from '../../shared/inputs';
import { PRICE_0_01 } from '../../shared/planned';
import {
  AI_ERROR_CODES,
  aiAnswer,
  aiRateLimit,
  readMarket,
  requireSnapshot,
  upstreamFailure,
} from '../shared/answer';
import { explainBlockFacts } from '../shared/chain';
import { ExplainBlockBodySchema } from './schema';

export const EXPLAIN_BLOCK_ALGORITHM = 'explain-block-v1';

/**
 * GET /api/v1/ai/explain/block/:hash_or_height (0.01): the block's facts (pool, fullness, fees
 * against subsidy, fee-rate percentiles against the blocks before it, notable transactions) and
 * prose written from them (docs/ai-resources.md).
 */
export const explainBlock = defineResource({
  method: 'GET',
  path: '/api/v1/ai/explain/block/:hash_or_height',
  description: 'Block analysis',
  price: PRICE_0_01,
  discovery: { category: 'ai', keywords: ['bitcoin', 'block', 'explain', 'ai'], operationId: 'explainBlock' },
  input: { pathParams: z.strictObject({ hash_or_height: BlockRefSchema }) },
  output: ExplainBlockBodySchema,
  errors: {
    unknown_block: AI_ERROR_CODES.unknown_block,
    upstream_unavailable: AI_ERROR_CODES.upstream_unavailable,
    no_validated_snapshot: AI_ERROR_CODES.no_validated_snapshot,
  },
  needs: ['snapshots', 'bitcoin'],
  unavailable: (capabilities) =>
    capabilities.bitcoin?.mempool
      ? undefined
      : 'needs a mempool.space-dialect upstream (MEMPOOL_URL) for blocks',
  rateLimit: aiRateLimit,
  precondition: requireSnapshot,
  async handler({ input, capabilities, requestId, fail }) {
    const read = readMarket(capabilities, requestId);
    if ('error' in read) return read.error;
    let facts: Awaited<ReturnType<typeof explainBlockFacts>>;
    try {
      facts = await explainBlockFacts({
        reader: capabilities.bitcoin.mempool!,
        hashOrHeight: input.params.hash_or_height.toLowerCase(),
        market: read.market,
      });
    } catch (error) {
      return upstreamFailure(error, 'unknown_block', fail);
    }
    const prose = await writeProse({
      model: capabilities.languageModel,
      subject: 'this Bitcoin block',
      facts,
      deterministic: blockProse(facts),
    });
    return aiAnswer({ reading: read.reading, algorithm: EXPLAIN_BLOCK_ALGORITHM, facts, prose });
  },
});
