import * as z from 'zod';
import { defineResource } from '../../kit';
import { PlannedBodySchema, PRICE_0_01 } from '../../shared/planned';

/** POST /api/v1/broadcast — broadcast of a signed transaction. */
export const broadcast = defineResource({
  method: 'POST',
  path: '/api/v1/broadcast',
  description: 'Broadcast of a signed transaction',
  price: PRICE_0_01,
  discovery: {
    category: 'transactions',
    keywords: ['bitcoin', 'transaction', 'broadcast'],
    operationId: 'broadcastTransaction',
  },
  input: {
    body: z.strictObject({
      hex: z
        .string()
        .regex(/^[0-9a-fA-F]*$/, 'must be hex characters only')
        .describe('Signed raw transaction hex')
        .meta({ examples: ['0200000001'] }),
      allow_high_fee: z
        .boolean()
        .optional()
        .describe('Broadcast even when the fee rate is above the absurd-fee limit'),
    }),
  },
  output: PlannedBodySchema,
  errors: {},
  needs: ['bitcoin'],
});
