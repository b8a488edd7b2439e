import * as z from 'zod';
import { defineResource } from '../../kit';
import { BlockRefSchema } from '../../shared/inputs';
import { PlannedBodySchema, PRICE_0_01 } from '../../shared/planned';

/** GET /api/v1/ai/explain/block/:hash_or_height — block analysis. Not built yet: published paused. */
export const explainBlock = defineResource({
  method: 'GET',
  path: '/api/v1/ai/explain/block/:hash_or_height',
  description: 'Block analysis',
  price: PRICE_0_01,
  discovery: { category: 'ai', keywords: ['bitcoin', 'block', 'explain', 'ai'], operationId: 'explainBlock' },
  input: { pathParams: z.strictObject({ hash_or_height: BlockRefSchema }) },
  output: PlannedBodySchema,
  errors: {},
  needs: ['snapshots', 'bitcoin'],
});
