import { defineResource } from '../../kit';
import { PlannedBodySchema, PRICE_0_01 } from '../../shared/planned';

/** GET /api/v1/mining/nextblock — next block prediction with fee analysis. */
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
  output: PlannedBodySchema,
  errors: {},
  needs: ['bitcoin'],
});
