import * as z from 'zod';
import { pendingResource } from './pending';

/** GET /api/v1/ai/fees/advice — Fee optimization recommendation (AI) (0.01 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const feeAdvice = pendingResource({
  method: 'GET',
  path: '/api/v1/ai/fees/advice',
  amount: '10000',
  description: 'Fee optimization recommendation (AI)',
  discovery: {
    category: 'ai',
    keywords: ['bitcoin', 'fees', 'advice', 'ai'],
    operationId: 'getFeeAdvice',
    input: {
      queryParams: z.object({
        urgency: z.string().optional().describe('How soon the transaction should confirm'),
        amount_btc: z.coerce.number().optional().describe('Amount to send, in BTC'),
        context: z.string().optional().describe('Free-text context for the advice'),
      }),
    },
  },
});
