import { pendingResource } from './pending';

/** GET /api/v1/fees/observatory/block-stats — Per-block fee statistics (0.005 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const observatoryBlockStats = pendingResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/block-stats',
  amount: '5000',
  description: 'Per-block fee statistics',
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'blocks', 'statistics'],
    operationId: 'getObservatoryBlockStats',
  },
});
