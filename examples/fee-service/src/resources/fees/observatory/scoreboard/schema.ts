import * as z from 'zod';
import { ObservatoryMetaSchema } from '../common';

const share = (what: string) =>
  z.number().min(0).max(1).nullable().describe(`${what}, 0–1; null before any judgment`);

export const ScoreRowSchema = z
  .strictObject({
    rank: z
      .number()
      .int()
      .min(1)
      .nullable()
      .describe(
        'Rank within the horizon (target), by cost; null for a row with nothing judged (listed last)',
      ),
    source: z
      .string()
      .describe('Estimator (e.g. mempool.space, esplora, core-economical, core-conservative)'),
    target: z.number().int().min(1).describe('Confirmation target, blocks (the horizon)'),
    n: z.number().int().min(0).describe('Judged estimates in the window'),
    blocks: z.number().int().min(0).describe('Distinct blocks the judged estimates were judged on'),
    polls: z.number().int().min(0).describe('Polls of the source in the window'),
    hit_rate: share(
      'Share of estimates that would have been included in a block of their window (docs/fee-rules.md#would-have-been-included)',
    ),
    miss_rate: share('1 − hit_rate'),
    within_rate: share('Hits at or below p75 of their first fit'),
    overpay_rate: share('Hits above p75 of their first fit'),
    median_overpayment_sat_vb: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'Median over hits of q − the entry rate of the first block that would have included q, sat/vB',
      ),
    p90_overpayment_sat_vb: z.number().min(0).nullable().describe('90th percentile of the same, sat/vB'),
    median_overpayment_sats_140: z
      .number()
      .min(0)
      .nullable()
      .describe('Median overpayment in sats for a 140 vB transaction'),
    p90_overpayment_sats_140: z.number().min(0).nullable().describe('90th percentile of the same, sats'),
    median_miss_entry_fee_sats_140: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'Median over misses of the fee for a 140 vB transaction that would have been included within the target (the lowest entry rate of the window × 140, rounded up); null without misses',
      ),
    availability: share('Share of polls that returned a valid value for this target'),
    cost: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'median_overpayment_sats_140 + 10 × miss_rate × median_miss_entry_fee_sats_140; lower is better',
      ),
  })
  .describe('One (source, target) over the window');

export const ScoreboardBodySchema = z
  .strictObject({
    data: z.strictObject({
      window: z
        .strictObject({
          hours: z.number().int().min(1).max(720).describe('Whole clock hours, the current one included'),
          from: z.iso.datetime().describe('Start of the first hour'),
          to: z.iso.datetime().describe('End of the current hour'),
        })
        .describe('Estimates observed in this window'),
      horizons: z
        .array(z.number().int().min(1))
        .describe('Targets present, ascending: each is ranked on its own'),
      rows: z
        .array(ScoreRowSchema)
        .min(1)
        .describe('Rows by horizon, then rank (unranked rows last); at least one has judged estimates'),
      scoring: z
        .strictObject({
          hit: z.string(),
          overpay: z.string(),
          cost: z.string(),
          quantiles: z.string(),
        })
        .describe('The rules the figures follow'),
    }),
    meta: ObservatoryMetaSchema,
  })
  .describe('Fee estimator accuracy scoreboard');
