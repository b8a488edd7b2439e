import * as z from 'zod';
import { blockProse } from '../../../analysis/block/prose';
import { defineResource } from '../../kit';
import { BlockRefSchema } from '../../shared/inputs';
import { PRICE_0_01 } from '../../shared/planned';
import { AI_ERROR_CODES, aiRateLimit, requireSnapshot } from '../shared/answer';
import { explainBlockFacts } from '../shared/chain';
import { explainer, needsMempoolDialect } from '../shared/explain';
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
  // Its handler acts or costs: one balance never pays for two runs (docs/reliability.md).
  gate: { reserveBalance: true },
  discovery: { category: 'ai', keywords: ['bitcoin', 'block', 'explain', 'ai'], operationId: 'explainBlock' },
  input: { pathParams: z.strictObject({ hash_or_height: BlockRefSchema }) },
  output: ExplainBlockBodySchema,
  errors: {
    unknown_block: AI_ERROR_CODES.unknown_block,
    upstream_unavailable: AI_ERROR_CODES.upstream_unavailable,
    no_validated_snapshot: AI_ERROR_CODES.no_validated_snapshot,
  },
  needs: ['snapshots', 'bitcoin'],
  unavailable: needsMempoolDialect('blocks'),
  rateLimit: aiRateLimit,
  precondition: requireSnapshot,
  handler: explainer({
    param: 'hash_or_height',
    subject: 'this Bitcoin block',
    algorithm: EXPLAIN_BLOCK_ALGORITHM,
    notFound: 'unknown_block',
    facts: (reader, hashOrHeight, market) => explainBlockFacts({ reader, hashOrHeight, market }),
    prose: blockProse,
  }),
});
