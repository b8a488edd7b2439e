import { pendingResource } from './pending';

/** GET /api/v1/mining/nextblock — Next block prediction with fee analysis (0.01 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const nextBlock = pendingResource({
  method: 'GET',
  path: '/api/v1/mining/nextblock',
  amount: '10000',
  description: 'Next block prediction with fee analysis',
  discovery: {
    category: 'mining',
    keywords: ['bitcoin', 'mining', 'block', 'prediction'],
    operationId: 'getNextBlock',
  },
});
