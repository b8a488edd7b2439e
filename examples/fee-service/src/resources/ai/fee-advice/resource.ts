import * as z from 'zod';
import { defineResource } from '../../kit';
import { PlannedBodySchema, PRICE_0_01 } from '../../shared/planned';

/** GET /api/v1/ai/fees/advice — fee optimisation recommendation. Not built yet: published paused. */
export const feeAdvice = defineResource({
  method: 'GET',
  path: '/api/v1/ai/fees/advice',
  description: 'Fee optimization recommendation (AI)',
  price: PRICE_0_01,
  discovery: { category: 'ai', keywords: ['bitcoin', 'fees', 'advice', 'ai'], operationId: 'getFeeAdvice' },
  input: {
    queryParams: z.strictObject({
      urgency: z
        .enum(['low', 'medium', 'high'])
        .optional()
        .describe('How soon the transaction should confirm'),
      amount_btc: z.coerce.number().positive().max(21_000_000).optional().describe('Amount to send, in BTC'),
      context: z.string().max(500).optional().describe('Free-text context for the advice'),
    }),
  },
  output: PlannedBodySchema,
  errors: {},
  needs: ['snapshots', 'bitcoin'],
});
