import * as z from 'zod';
import { ObservatoryMetaSchema } from '../common';

const rate = (what: string) => z.number().min(0).describe(`${what}, sat/vB`);

export const BlockStatsRowSchema = z
  .strictObject({
    height: z.number().int().min(0).describe('Block height'),
    hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('Block hash'),
    time: z.iso.datetime().describe('Block timestamp'),
    tx_count: z.number().int().min(0).describe('Transactions, the coinbase included'),
    weight: z.number().int().min(0).describe('Block weight, WU'),
    total_fee: z.number().int().min(0).describe('Fees paid, sats'),
    subsidy: z.number().int().min(0).describe('Block subsidy, sats'),
    min: rate('Lowest fee rate'),
    p10: rate('10th percentile fee rate by vsize'),
    p25: rate('25th percentile'),
    p50: rate('Median'),
    p75: rate('75th percentile'),
    p90: rate('90th percentile'),
    max: rate('Highest fee rate'),
    avg_fee_rate: rate('Fees over virtual size'),
    stats_from: z
      .enum(['transactions', 'fee_range', 'getblockstats'])
      .describe(
        "Where the percentiles come from: the block's transactions, mempool's feeRange, or Core's getblockstats",
      ),
    relay_minimum: rate("The lowest rate the upstream's mempool accepted when the block was recorded"),
    full: z
      .boolean()
      .describe('Weight at least 3,960,000 WU (99 % of the limit); otherwise the block had room'),
    entry_rate: rate(
      'The lowest rate that would have been included: relay_minimum when the block had room, else max(relay_minimum, p10) (docs/fee-rules.md#would-have-been-included)',
    ),
  })
  .describe("One block's fee statistics");

export const BlockStatsBodySchema = z
  .strictObject({
    data: z.strictObject({
      blocks: z.array(BlockStatsRowSchema).min(1).describe('Newest first'),
      next_before: z
        .number()
        .int()
        .min(0)
        .nullable()
        .describe('Pass as `before` for the next page (older blocks); null on the last page'),
    }),
    meta: ObservatoryMetaSchema,
  })
  .describe('Per-block fee statistics');
