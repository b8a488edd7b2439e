import { pendingResource } from './pending';

/** GET /api/v1/fees/observatory/scoreboard — Fee estimator accuracy scoreboard (0.005 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const observatoryScoreboard = pendingResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/scoreboard',
  amount: '5000',
  description: 'Fee estimator accuracy scoreboard',
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'estimators', 'accuracy'],
    operationId: 'getObservatoryScoreboard',
  },
});
