import * as z from 'zod';
import { aiBodySchema, TiersSchema } from '../shared/schema';

const sats = z.number().int().min(0);
const rate = z.number().min(0);
const urgency = z.enum(['low', 'medium', 'high']);

export const AdviceFactsSchema = z
  .strictObject({
    urgency,
    urgency_from: z.enum(['parameter', 'context', 'default']),
    horizon_blocks: z.union([z.literal(1), z.literal(6), z.literal(144)]),
    context: z
      .strictObject({ recognised: z.array(z.string()), unrecognised: z.array(z.string()) })
      .nullable(),
    assumed_vsize: sats.describe('Size the fee is computed for, vB'),
    size_profile: z.string().describe('Script type of the assumed one-input, two-output transaction'),
    tier_used: z.enum(['fastest', 'hour', 'economy']),
    recommended_fee_rate_sat_vb: rate,
    decision: z.enum(['send', 'wait']),
    reason: z.string(),
    fee_sat: sats,
    next_block_fee_sat: sats,
    savings: z.strictObject({
      vs_next_block_sat: sats,
      vs_next_block_percent: z.number().min(0),
      by_deferring_sat: sats.nullable(),
    }),
    recent_floor_sat_vb: rate
      .nullable()
      .describe(
        'Median entry rate of recent blocks: the lowest rate each would have included (docs/fee-rules.md#would-have-been-included)',
      ),
    amount: z.strictObject({ amount_sat: sats, fee_share_percent: z.number().min(0) }).nullable(),
    warnings: z.array(
      z.enum([
        'fee_exceeds_amount',
        'fee_above_1_percent_of_amount',
        'context_words_ignored',
        'tier_rarely_included',
      ]),
    ),
    confidence: z.union([
      z.strictObject({
        level: z.enum(['high', 'medium', 'low']),
        hit_rate: z.number().min(0).max(1),
        n: sats,
        source: z.string(),
        window_hours: sats,
      }),
      z.strictObject({ level: z.literal('unknown'), note: z.string() }),
    ]),
    market: z.strictObject({
      tiers: TiersSchema,
      next_block_floor_sat_vb: rate,
      projected_block_count: sats,
    }),
    send_wait_v1: z.strictObject({ decision: z.enum(['send', 'wait']), reason_codes: z.array(z.string()) }),
  })
  .describe('Checkable facts of the advice');

export const FeeAdviceBodySchema = aiBodySchema(AdviceFactsSchema, 'Fee advice');
