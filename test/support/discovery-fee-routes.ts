// The fee service's production route profile (seed sections 4.2 and 4.3), as a Tollbooth routes
// config with discovery metadata. The fee service can copy this file: replace the `z` import by
// `import * as z from 'zod'`, and the placeholder output schemas by its own response schemas.
import type { FreeRoute, RoutesConfig } from '@tollbooth/core';
import * as z from 'zod';

export const FEE_SERVICE_NETWORK = 'eip155:8453';
/** Placeholder recipient of the seed (`<PAY_TO_ADDRESS>`). */
export const FEE_SERVICE_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

const TXID = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b';
const BLOCK = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';

/** Placeholder 200 body of the resources whose body the seed does not show. */
const ResourceBody = z
  .object({
    data: z.record(z.string(), z.unknown()).describe('Resource payload'),
    meta: z.record(z.string(), z.unknown()).describe('Provenance of the payload'),
  })
  .describe('Resource response');

/** The timing decision body (seed 2.2), reduced to its top-level contract. */
const FeeDecisionBody = z.object({
  data: z.object({
    decision: z.enum(['send', 'wait']),
    reason_codes: z
      .array(z.enum(['meaningful_fee_curve_savings', 'heavy_backlog', 'limited_wait_savings']))
      .min(1)
      .max(2),
    fee_rates_sat_vb: z.record(z.string(), z.number().min(0)),
    mempool: z.record(z.string(), z.number().min(0)),
    potential_savings: z.record(z.string(), z.number().min(0)),
  }),
  meta: z.record(z.string(), z.unknown()),
  limitations: z.array(z.string()),
});

export interface FeeServiceRoutesOptions {
  payTo?: string;
  network?: string;
  /** Availability of the timing decision; the production profile publishes it paused. */
  decisionAvailability?: 'active' | 'paused' | 'retired';
}

/**
 * The ten paid resources of seed section 4.3 (active), the timing decision of 4.2 (paused in the
 * production profile) and the price patterns of 4.3.
 */
export function feeServiceRoutes(options: FeeServiceRoutesOptions = {}): RoutesConfig {
  const payTo = options.payTo ?? FEE_SERVICE_PAY_TO;
  const network = options.network ?? FEE_SERVICE_NETWORK;
  const pay = (price: string, maxTimeoutSeconds = 300) => ({ network, payTo, price, maxTimeoutSeconds });

  return {
    'GET /api/v1/fees/now': {
      accepts: pay('$0.001', 60),
      description: 'Send-or-wait timing decision (send-wait-v1)',
      availability: options.decisionAvailability ?? 'paused',
      canonical: true,
      discovery: {
        category: 'fees',
        keywords: ['bitcoin', 'fees', 'timing', 'decision'],
        operationId: 'getFeeTimingDecision',
        output: FeeDecisionBody,
      },
    },
    'GET /api/v1/ai/explain/transaction/:txid': {
      accepts: pay('$0.01'),
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
              .meta({ examples: [TXID] }),
          }),
        },
        output: ResourceBody,
      },
    },
    'GET /api/v1/ai/explain/block/:hash_or_height': {
      accepts: pay('$0.01'),
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
              .meta({ examples: [BLOCK] }),
          }),
        },
        output: ResourceBody,
      },
    },
    'GET /api/v1/ai/fees/advice': {
      accepts: pay('$0.01'),
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
        output: ResourceBody,
      },
    },
    'GET /api/v1/ai/chat': {
      accepts: pay('$0.01'),
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
        output: ResourceBody,
      },
    },
    'POST /api/v1/broadcast': {
      accepts: pay('$0.01'),
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
        output: ResourceBody,
      },
    },
    'GET /api/v1/mining/nextblock': {
      accepts: pay('$0.01'),
      description: 'Next block prediction with fee analysis',
      discovery: {
        category: 'mining',
        keywords: ['bitcoin', 'mining', 'block', 'prediction'],
        operationId: 'getNextBlock',
        output: ResourceBody,
      },
    },
    'GET /api/v1/fees/observatory/scoreboard': {
      accepts: pay('$0.005'),
      description: 'Fee estimator accuracy scoreboard',
      discovery: {
        category: 'fees',
        keywords: ['bitcoin', 'fees', 'estimators', 'accuracy'],
        operationId: 'getObservatoryScoreboard',
        output: ResourceBody,
      },
    },
    'GET /api/v1/fees/observatory/block-stats': {
      accepts: pay('$0.005'),
      description: 'Per-block fee statistics',
      discovery: {
        category: 'fees',
        keywords: ['bitcoin', 'fees', 'blocks', 'statistics'],
        operationId: 'getObservatoryBlockStats',
        output: ResourceBody,
      },
    },
    'GET /api/v1/fees/observatory/estimates': {
      accepts: pay('$0.005'),
      description: 'Fee estimate history from multiple sources',
      discovery: {
        category: 'fees',
        keywords: ['bitcoin', 'fees', 'estimates', 'history'],
        operationId: 'getObservatoryEstimates',
        output: ResourceBody,
      },
    },
    'GET /api/v1/fees/landscape': {
      accepts: pay('$0.005'),
      description: 'Complete fee landscape analysis',
      discovery: {
        category: 'fees',
        keywords: ['bitcoin', 'fees', 'landscape', 'analysis'],
        operationId: 'getFeeLandscape',
        output: ResourceBody,
      },
    },
    // Price patterns: what any other path under them costs. Concrete routes above win over them.
    '/api/v1/ai/*': { accepts: pay('$0.01'), description: 'AI explainers and advice' },
    '/api/v1/fees/observatory/*': { accepts: pay('$0.005'), description: 'Fee observatory analytics' },
    '/api/v1/analyst*': { accepts: pay('$0.05'), description: 'Multi-step AI analyst' },
  };
}

/** The free preview, for the OpenAPI document. */
export const FEE_PREVIEW_ROUTE: FreeRoute = {
  method: 'GET',
  path: '/api/v1/fees/preview',
  summary: 'Free fee preview',
  operationId: 'getFeePreview',
  tags: ['fees'],
  output: z.object({
    data: z.record(z.string(), z.unknown()),
    meta: z.record(z.string(), z.unknown()),
  }),
  errorStatuses: [503],
};

/** The ten listed resources of seed section 4.3: path, method, atomic amount, priceUsd, category. */
export const SEED_RESOURCES = [
  ['GET', '/api/v1/ai/explain/transaction/{txid}', '10000', '0.01', 'ai'],
  ['GET', '/api/v1/ai/explain/block/{hash_or_height}', '10000', '0.01', 'ai'],
  ['GET', '/api/v1/ai/fees/advice', '10000', '0.01', 'ai'],
  ['GET', '/api/v1/ai/chat', '10000', '0.01', 'ai'],
  ['POST', '/api/v1/broadcast', '10000', '0.01', 'transactions'],
  ['GET', '/api/v1/mining/nextblock', '10000', '0.01', 'mining'],
  ['GET', '/api/v1/fees/observatory/scoreboard', '5000', '0.005', 'fees'],
  ['GET', '/api/v1/fees/observatory/block-stats', '5000', '0.005', 'fees'],
  ['GET', '/api/v1/fees/observatory/estimates', '5000', '0.005', 'fees'],
  ['GET', '/api/v1/fees/landscape', '5000', '0.005', 'fees'],
] as const;
