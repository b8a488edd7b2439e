import * as z from 'zod';
import { defineResource } from '../../kit';
import { TxidSchema } from '../../shared/inputs';
import { PlannedBodySchema, PRICE_0_01 } from '../../shared/planned';

/** GET /api/v1/ai/explain/transaction/:txid — transaction explainer. Not built yet: published paused. */
export const explainTransaction = defineResource({
  method: 'GET',
  path: '/api/v1/ai/explain/transaction/:txid',
  description: 'Transaction explainer',
  price: PRICE_0_01,
  discovery: {
    category: 'ai',
    keywords: ['bitcoin', 'transaction', 'explain', 'ai'],
    operationId: 'explainTransaction',
  },
  input: { pathParams: z.strictObject({ txid: TxidSchema }) },
  output: PlannedBodySchema,
  errors: {},
  needs: ['snapshots', 'bitcoin'],
});
