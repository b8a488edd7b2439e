import { pendingResource } from './pending';

/** GET /api/v1/fees/landscape — Complete fee landscape analysis (0.005 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const feeLandscape = pendingResource({
  method: 'GET',
  path: '/api/v1/fees/landscape',
  amount: '5000',
  description: 'Complete fee landscape analysis',
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'landscape', 'analysis'],
    operationId: 'getFeeLandscape',
  },
});
