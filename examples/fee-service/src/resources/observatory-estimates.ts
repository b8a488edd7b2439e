import { pendingResource } from './pending';

/** GET /api/v1/fees/observatory/estimates — Fee estimate history from multiple sources (0.005 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const observatoryEstimates = pendingResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/estimates',
  amount: '5000',
  description: 'Fee estimate history from multiple sources',
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'estimates', 'history'],
    operationId: 'getObservatoryEstimates',
  },
});
