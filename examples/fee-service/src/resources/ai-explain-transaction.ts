import * as z from 'zod';
import { pendingResource } from './pending';

/** GET /api/v1/ai/explain/transaction/:txid — Transaction explainer (0.01 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const explainTransaction = pendingResource({
  method: 'GET',
  path: '/api/v1/ai/explain/transaction/:txid',
  amount: '10000',
  description: 'Transaction explainer',
  discovery: {
    category: 'ai',
    keywords: ['bitcoin', 'transaction', 'explain', 'ai'],
    operationId: 'explainTransaction',
    input: {
      pathParams: z.object({
        txid: z
          .string()
          .regex(/^[0-9a-fA-F]{64}$/)
          .describe('Transaction id')
          .meta({ examples: ['4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b'] }),
      }),
    },
  },
});
