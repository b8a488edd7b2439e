import { defineResource } from '../../../kit';
import { PlannedBodySchema, PRICE_0_005 } from '../../../shared/planned';

/** GET /api/v1/fees/observatory/block-stats — per-block fee statistics. Needs the observatory's history: published paused. */
export const observatoryBlockStats = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/block-stats',
  description: 'Per-block fee statistics',
  price: PRICE_0_005,
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'blocks', 'statistics'],
    operationId: 'getObservatoryBlockStats',
  },
  output: PlannedBodySchema,
  errors: {},
  needs: ['history'],
});
