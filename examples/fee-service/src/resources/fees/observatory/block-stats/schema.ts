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
  })
  .describe("One block's fee statistics");

export const BlockStatsBodySchema = z
  .strictObject({
    data: z.strictObject({
      blocks: z.array(BlockStatsRowSchema).describe('Newest first'),
      next_before: z
        .number()
        .int()
        .min(0)
        .nullable()
        .describe('Pass as `before` for the next page (older blocks); null on the last page'),
      empty_reason: z.string().optional().describe('Why there are no blocks (only when blocks is empty)'),
    }),
    meta: ObservatoryMetaSchema,
  })
  .describe('Per-block fee statistics');
