import * as z from 'zod';
import { defineResource } from '../../kit';
import { PlannedBodySchema, PRICE_0_01 } from '../../shared/planned';

/** GET /api/v1/ai/chat — Bitcoin knowledge chatbot. Not built yet: published paused. */
export const chat = defineResource({
  method: 'GET',
  path: '/api/v1/ai/chat',
  description: 'Bitcoin knowledge chatbot',
  price: PRICE_0_01,
  discovery: { category: 'ai', keywords: ['bitcoin', 'chat', 'ai'], operationId: 'chat' },
  input: {
    queryParams: z.strictObject({
      q: z
        .string()
        .min(1)
        .max(500)
        .describe('The question (1 to 500 characters)')
        .meta({ examples: ['Why are fees high today?'] }),
    }),
  },
  output: PlannedBodySchema,
  errors: {},
  needs: ['snapshots', 'bitcoin'],
});
