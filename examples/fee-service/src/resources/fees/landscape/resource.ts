import { defineResource } from '../../kit';
import { PlannedBodySchema, PRICE_0_005 } from '../../shared/planned';

/** GET /api/v1/fees/landscape — complete fee landscape analysis. */
export const feeLandscape = defineResource({
  method: 'GET',
  path: '/api/v1/fees/landscape',
  description: 'Complete fee landscape analysis',
  price: PRICE_0_005,
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'landscape', 'analysis'],
    operationId: 'getFeeLandscape',
  },
  output: PlannedBodySchema,
  errors: {},
  needs: ['bitcoin'],
});
