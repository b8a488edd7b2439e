import * as z from 'zod';
import { ObservatoryMetaSchema } from '../common';

export const EstimateRowSchema = z
  .strictObject({
    id: z.number().int().min(1).describe('Record id'),
    source: z.string().describe('Estimator'),
    target: z.number().int().min(1).describe('Confirmation target, blocks'),
    rate_sat_vb: z.number().min(0).describe('Quoted fee rate, sat/vB'),
    observed_at: z.iso.datetime().describe('When the source answered'),
    tip_height: z.number().int().min(0).describe('Chain height the source saw'),
    status: z
      .enum(['pending', 'judged', 'unjudgeable'])
      .describe(
        'pending until its window is recorded; unjudgeable when a block of it is missing from the history',
      ),
    judgment: z
      .strictObject({
        hit: z
          .boolean()
          .describe(
            'Would have been included in a block of its window: reached its entry rate (docs/fee-rules.md#would-have-been-included)',
          ),
        first_fit: z
          .number()
          .int()
          .nullable()
          .describe('Height of the first block that would have included it'),
        overpay: z.boolean().describe('Above p75 of the first fit'),
        overpayment_sat_vb: z.number().min(0).describe('q − entry rate of the first fit; 0 for a miss'),
        overpayment_sats_140: z.number().min(0).describe('The same for a 140 vB transaction, sats'),
        entry_rate_sat_vb: z
          .number()
          .min(0)
          .describe(
            'The rate that would have made it: the entry rate of the first fit for a hit, the lowest entry rate of the window for a miss',
          ),
      })
      .nullable()
      .describe('The verdict, once judged'),
  })
  .describe('One recorded estimate');

export const GapRowSchema = z
  .strictObject({
    source: z.string().describe('The source, or * for the recorder itself'),
    from: z.iso.datetime(),
    to: z.iso.datetime().nullable().describe('null while it lasts'),
    reason: z.string().describe('Why nothing was recorded'),
  })
  .describe('A span with no record');

export const EstimatesBodySchema = z
  .strictObject({
    data: z.strictObject({
      estimates: z.array(EstimateRowSchema).min(1).describe('Oldest first'),
      next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last'),
      since: z.iso.datetime().describe('Start of the interval (inclusive)'),
      until: z.iso.datetime().describe('End of the interval (exclusive)'),
      gaps: z.array(GapRowSchema).describe('Spans of the interval in which a source recorded nothing'),
    }),
    meta: ObservatoryMetaSchema,
  })
  .describe('Fee estimate history from multiple sources');
