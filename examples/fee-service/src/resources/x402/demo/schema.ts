import * as z from 'zod';

const Check = z
  .strictObject({
    check: z
      .enum(['decode', 'requirements', 'local_verification', 'facilitator_verification'])
      .describe(
        'decode: the header parses as an x402 payload; requirements: it accepts these terms; local_verification: signature, recipient, amount and validity window checked here; facilitator_verification: the facilitator’s /verify (signature, amount, balance, window).',
      ),
    ok: z.boolean(),
    detail: z.string().describe('What was found.'),
  })
  .describe('One check of the rehearsal.');

export const X402DemoResultSchema = z
  .strictObject({
    data: z
      .strictObject({
        would_settle: z.literal(true).describe('The payment passed every check a real paid request makes.'),
        settled: z.literal(false).describe('The demo never settles: nothing was charged.'),
        real_resource_status: z.literal(200).describe('What the real resource would answer.'),
        payer: z.string().describe('The payer the signature recovers to.'),
        checks: z.array(Check).length(4),
        would_charge: z
          .strictObject({
            amount: z.string().describe('Atomic units.'),
            display: z.string().describe('The same amount in USDC, e.g. 0.001 USDC.'),
            asset: z.string(),
            network: z.string(),
            pay_to: z.string(),
          })
          .describe('What the real resource would have charged.'),
      })
      .describe('The rehearsal’s verdict.'),
    meta: z
      .strictObject({
        terms_of: z
          .literal('/api/v1/fees/now')
          .describe('The paid resource whose terms the demo challenges with.'),
        facilitator: z.string().describe('The facilitator that verified.'),
        note: z.string(),
      })
      .describe('What the demo is.'),
  })
  .describe('x402 demo: a payment verified and never settled (GET /api/v1/x402-demo).');

export type X402DemoResult = z.infer<typeof X402DemoResultSchema>;
export type DemoCheck = z.infer<typeof Check>;
