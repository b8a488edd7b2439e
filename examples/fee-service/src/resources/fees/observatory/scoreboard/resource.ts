import { defineResource } from '../../../kit';
import { PlannedBodySchema, PRICE_0_005 } from '../../../shared/planned';

/** GET /api/v1/fees/observatory/scoreboard — fee estimator accuracy scoreboard. Needs the observatory's history: published paused. */
export const observatoryScoreboard = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/scoreboard',
  description: 'Fee estimator accuracy scoreboard',
  price: PRICE_0_005,
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'estimators', 'accuracy'],
    operationId: 'getObservatoryScoreboard',
  },
  output: PlannedBodySchema,
  errors: {},
  needs: ['history'],
});
