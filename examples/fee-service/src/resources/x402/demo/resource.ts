import * as z from 'zod';
import { defineResource } from '../../kit';

/** GET /api/v1/x402-demo (free) — a zero-cost rehearsal of the payment flow. */
export const x402Demo = defineResource({
  method: 'GET',
  path: '/api/v1/x402-demo',
  description: 'Free rehearsal of the x402 payment flow: verifies a payment and never settles it',
  discovery: { category: 'x402', keywords: ['x402', 'demo', 'wallet', 'test'], operationId: 'x402Demo' },
  output: z.object({}).describe('Demo answer'),
  errors: {},
  needs: ['payments'],
});
