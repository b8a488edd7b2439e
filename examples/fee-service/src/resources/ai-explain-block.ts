import * as z from 'zod';
import { pendingResource } from './pending';

/** GET /api/v1/ai/explain/block/:hash_or_height — Block analysis (0.01 USDC, seed 4.3). Not implemented yet: answers 501 after verify, never settled. */
export const explainBlock = pendingResource({
  method: 'GET',
  path: '/api/v1/ai/explain/block/:hash_or_height',
  amount: '10000',
  description: 'Block analysis',
  discovery: {
    category: 'ai',
    keywords: ['bitcoin', 'block', 'explain', 'ai'],
    operationId: 'explainBlock',
    input: {
      pathParams: z.object({
        hash_or_height: z
          .string()
          .describe('Block hash or height')
          .meta({ examples: ['000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f'] }),
      }),
    },
  },
});
