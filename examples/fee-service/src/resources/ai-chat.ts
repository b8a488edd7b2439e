import * as z from 'zod';
import { pendingResource } from './pending';

/** GET /api/v1/ai/chat — Bitcoin knowledge chatbot (0.01 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const chat = pendingResource({
  method: 'GET',
  path: '/api/v1/ai/chat',
  amount: '10000',
  description: 'Bitcoin knowledge chatbot',
  discovery: {
    category: 'ai',
    keywords: ['bitcoin', 'chat', 'ai'],
    operationId: 'chat',
    input: {
      queryParams: z.object({
        q: z
          .string()
          .min(1)
          .describe('The question')
          .meta({ examples: ['Why are fees high today?'] }),
      }),
    },
  },
});
