import { compileRoutes, fromAtomicAmount, httpStatusOf, isErrorCode } from '@tollbooth/core';
import { acceptsOf } from '../../../capabilities/payment-terms';
import { FEE_DECISION_OFFER, FEE_DECISION_USDC } from '../../fees/now/offer';
import { defineResource } from '../../kit';
import { rehearsePayment } from './rehearse';
import { X402DemoResultSchema } from './schema';

const PATH = '/api/v1/x402-demo';
const NEVER_SETTLED = { 'x-payment-settled': 'false', 'cache-control': 'no-store' };

/** The three steps a client takes, as the 402 body explains them. */
export const DEMO_STEPS = [
  `1. This 402 carries the terms of ${FEE_DECISION_OFFER.method} ${FEE_DECISION_OFFER.path} (${FEE_DECISION_USDC} USDC) in PAYMENT-REQUIRED (base64 JSON) and in this body.`,
  '2. Sign a payment for them and repeat this request with it in PAYMENT-SIGNATURE (or the legacy X-PAYMENT).',
  '3. The demo decodes it, verifies it locally and with the facilitator, and answers what the real resource would (200; 400 or 402 with the reason), never settling it: nothing is charged.',
] as const;

/**
 * GET /api/v1/x402-demo (free): a zero-cost rehearsal of the payment flow for agents testing
 * their wallet integration (docs/fee-service-contract.md#get-apiv1x402-demo). Without a payment:
 * a 402 challenging with the decision's terms. With one: every check a paid request makes,
 * answered with the real resource's status and each check's result — never settled, as the body
 * and the `X-Payment-Settled: false` header say. It calls the facilitator for free, so it has its
 * own rate limit; nothing a client sends makes it answer 500 or more (a facilitator outage is 503).
 */
export const x402Demo = defineResource({
  method: 'GET',
  path: PATH,
  description: 'Free rehearsal of the x402 payment flow: verifies a payment and never settles it',
  discovery: { category: 'x402', keywords: ['x402', 'demo', 'wallet', 'test'], operationId: 'x402Demo' },
  output: X402DemoResultSchema,
  errors: {
    facilitator_unavailable: {
      status: 503,
      retryable: true,
      description: 'The facilitator did not answer /verify; a real paid request would answer the same.',
    },
  },
  needs: ['payments'],
  demo: true,
  // A free relay to the facilitator's /verify: bounded even with the edge rate limit off.
  rateLimit: (config) => ({
    name: 'x402-demo',
    max: config.x402Demo.rateLimitMax,
    windowMs: config.x402Demo.rateLimitWindowMs,
    always: true,
  }),
  createHandler(env) {
    const payments = env.capabilities.payments!;
    // The decision's terms on a route of the demo's own, so the challenge names this URL.
    const table = compileRoutes(
      {
        [`GET ${PATH}`]: {
          accepts: acceptsOf(
            payments.terms,
            FEE_DECISION_OFFER.price.amount,
            FEE_DECISION_OFFER.price.maxTimeoutSeconds,
          ),
          description: 'x402 demo: the terms of GET /api/v1/fees/now, verified and never settled',
        },
      },
      { schemes: [...payments.schemes], baseUrl: env.baseUrl },
    );
    const route = table.get(`GET ${PATH}`)!;
    const resourceUrl = route.resourceUrl();
    const challenge = route.challenge(resourceUrl);
    const requirement = route.requirements[0]!;
    // What the real resource would answer: 400 for a header that is no payment, else 402.
    const statusOf = (reason: string | undefined) =>
      reason !== undefined && isErrorCode(reason) && httpStatusOf(reason) === 400 ? 400 : 402;
    const challengeAnswer = (reason: string | undefined, checks: unknown[]) => ({
      status: statusOf(reason),
      headers: { ...NEVER_SETTLED, 'payment-required': challenge.header! },
      body: {
        ...challenge.object,
        ...(reason ? { error: reason } : {}),
        demo: { settled: false, steps: DEMO_STEPS, ...(checks.length > 0 ? { checks } : {}) },
      },
    });
    return async ({ request, fail }) => {
      const header = request.header('payment-signature') ?? request.header('x-payment');
      if (header === undefined || header === '') return challengeAnswer(undefined, []);
      const rehearsal = await rehearsePayment({
        header,
        requirements: route.requirements,
        schemes: payments.schemes,
        facilitator: payments.facilitator,
        nowSeconds: Math.floor(Date.now() / 1000),
      });
      if (rehearsal.verdict === 'facilitator_unavailable') {
        return fail('facilitator_unavailable', undefined, NEVER_SETTLED);
      }
      if (rehearsal.verdict === 'refused') return challengeAnswer(rehearsal.reason, rehearsal.checks);
      return {
        status: 200,
        headers: NEVER_SETTLED,
        body: {
          data: {
            would_settle: true,
            settled: false,
            real_resource_status: 200,
            payer: rehearsal.payer,
            checks: rehearsal.checks,
            would_charge: {
              amount: requirement.amount,
              display: `${fromAtomicAmount(requirement.amount, 6)} USDC`,
              asset: requirement.asset,
              network: requirement.network,
              pay_to: requirement.payTo,
            },
          },
          meta: {
            terms_of: '/api/v1/fees/now',
            facilitator: payments.facilitatorName,
            note: 'A rehearsal: the payment was verified and not settled; nothing was charged. The signed authorization stays valid until it expires: this service never submits it.',
          },
        },
      };
    };
  },
});
