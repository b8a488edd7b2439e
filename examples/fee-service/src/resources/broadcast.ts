import * as z from 'zod';
import { pendingResource } from './pending';

/** POST /api/v1/broadcast — Broadcast of a signed transaction (0.01 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const broadcast = pendingResource({
  method: 'POST',
  path: '/api/v1/broadcast',
  amount: '10000',
  description: 'Broadcast of a signed transaction',
  discovery: {
    category: 'transactions',
    keywords: ['bitcoin', 'transaction', 'broadcast'],
    operationId: 'broadcastTransaction',
    input: {
      body: z.object({
        hex: z
          .string()
          .regex(/^[0-9a-fA-F]+$/)
          .describe('Signed raw transaction hex')
          .meta({ examples: ['0200000001'] }),
      }),
    },
  },
});
