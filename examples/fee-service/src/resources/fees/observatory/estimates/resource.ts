import { defineResource } from '../../../kit';
import { PlannedBodySchema, PRICE_0_005 } from '../../../shared/planned';

/** GET /api/v1/fees/observatory/estimates — fee estimate history from multiple sources. Needs the observatory's history: published paused. */
export const observatoryEstimates = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/estimates',
  description: 'Fee estimate history from multiple sources',
  price: PRICE_0_005,
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'estimates', 'history'],
    operationId: 'getObservatoryEstimates',
  },
  output: PlannedBodySchema,
  errors: {},
  needs: ['history'],
});
