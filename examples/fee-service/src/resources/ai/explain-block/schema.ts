import * as z from 'zod';
import { aiBodySchema } from '../shared/schema';

const sats = z.number().int().min(0);
const rate = z.number().min(0);
const notableTx = z
  .strictObject({ txid: z.string().regex(/^[0-9a-f]{64}$/), fee: sats, vsize: sats, fee_rate_sat_vb: rate })
  .nullable();

export const BlockFactsSchema = z
  .strictObject({
    block: z.strictObject({
      height: sats,
      hash: z.string().regex(/^[0-9a-f]{64}$/),
      time: z.iso.datetime(),
      pool: z.string().nullable().describe('Mining pool, when the upstream identifies it'),
      tx_count: sats,
      size: sats,
      weight: sats,
      fullness_percent: z.number().min(0).describe('weight / 4,000,000, percent'),
      confirmations: sats,
    }),
    fees: z.strictObject({
      total_fee_sat: sats,
      subsidy_sat: sats.describe('50 BTC halved every 210,000 blocks'),
      reward_sat: sats,
      fee_share_of_reward_percent: z.number().min(0),
      avg_fee_rate_sat_vb: rate,
    }),
    fee_rates_sat_vb: z
      .strictObject({ min: rate, p10: rate, p25: rate, p50: rate, p75: rate, p90: rate, max: rate })
      .nullable(),
    inclusion: z
      .strictObject({
        full: z.boolean().describe('Weight ≥ 3,960,000 WU'),
        relay_minimum_sat_vb: rate.describe('The relay minimum (today’s minimum tier)'),
        entry_rate_sat_vb: rate.describe(
          'The lowest rate that would have been included: the relay minimum when the block had room, max(relay minimum, p10) when full (docs/fee-rules.md#would-have-been-included)',
        ),
      })
      .nullable()
      .describe('The block by the one rule; null without its fee rates'),
    recent: z
      .strictObject({
        blocks: sats.describe('Blocks before it compared with'),
        median_p50_sat_vb: rate,
        median_p10_sat_vb: rate,
        lower_median_count: sats,
        comparison: z
          .enum(['higher', 'in_line', 'lower'])
          .describe('Its median against theirs (±25 % is in line)'),
        median_total_fee_sat: sats,
      })
      .nullable(),
    time_since_previous_seconds: z.number().int().nullable(),
    notable: z
      .strictObject({
        transactions_seen: sats,
        highest_fee: notableTx,
        highest_rate: notableTx,
        largest: notableTx,
      })
      .nullable(),
  })
  .describe('Checkable facts of the block');

export const ExplainBlockBodySchema = aiBodySchema(BlockFactsSchema, 'Block analysis');
