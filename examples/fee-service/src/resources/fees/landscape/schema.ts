import * as z from 'zod';
import { DECISIONS, REASON_CODES } from '../../../domain/constants';
import { FeeRatesSchema, MempoolFiguresSchema, PotentialSavingsSchema } from '../../../domain/schemas';
import { ChainDataMetaSchema, FeeRatePercentilesSchema } from '../../shared/provenance';
import { ENVIRONMENT_NAMES, TREND_DIRECTIONS } from './environment';

const rate = (description: string) => z.number().min(0).describe(description);
const count = (description: string) => z.number().int().min(0).describe(description);

const SourceQuoteSchema = z
  .discriminatedUnion('status', [
    z.strictObject({
      source: z.string().describe('Estimator: mempool.space, esplora, core-economical or core-conservative.'),
      status: z.literal('ok'),
      tiers: FeeRatesSchema,
      targets: z
        .record(z.string().regex(/^\d+$/), z.number().min(0))
        .describe(
          'Confirmation target in blocks → rate, sat/vB, in target order and never rising with the target: a longer target quoted above a shorter one is lowered to it (a running minimum from the shortest).',
        ),
      repaired: z
        .boolean()
        .describe('True when a longer target (or tier) quoted more than a shorter one and was lowered.'),
      lowered_targets: z
        .record(z.string().regex(/^\d+$/), z.number().min(0))
        .describe('Each target the repair lowered → its rate as quoted, sat/vB; empty when none was.'),
    }),
    z.strictObject({
      source: z.string(),
      status: z.literal('unavailable'),
      reason: z.string().describe('Why this source gave no quote now.'),
    }),
  ])
  .describe("One configured estimator's quote.");

const TierComparisonSchema = z
  .strictObject({
    tier: z.enum(['fastest', 'half_hour', 'hour', 'economy', 'minimum']),
    target_blocks: z
      .number()
      .int()
      .min(1)
      .nullable()
      .describe('Confirmation target of the tier; null for minimum (a floor).'),
    quotes: z
      .array(z.strictObject({ source: z.string(), rate_sat_vb: rate('Quoted rate, sat/vB.') }))
      .min(1)
      .describe('Each available source, side by side.'),
    low_sat_vb: rate('Lowest quote.'),
    high_sat_vb: rate('Highest quote.'),
    spread_sat_vb: rate('high − low, sat/vB.'),
    spread_percent: rate('100 × spread / high, one decimal; 0 when high is 0.'),
  })
  .describe('One tier across the sources.');

export const FeeLandscapeSchema = z
  .strictObject({
    data: z
      .strictObject({
        tip_height: count('Height of the chain tip the reading saw.'),
        sources: z.array(SourceQuoteSchema).min(1).describe('Every configured estimator, available or not.'),
        tiers: z.array(TierComparisonSchema).length(5).describe('Each tier across the available sources.'),
        mempool: MempoolFiguresSchema.extend({
          total_fee_sat: count('Sum of the unconfirmed transactions’ fees, sats.'),
        }),
        histogram: z
          .strictObject({
            bands: z
              .array(
                z.strictObject({
                  min_sat_vb: rate(
                    'Lower edge of the band, sat/vB (inclusive): the lowest rate of the upstream buckets it holds.',
                  ),
                  max_sat_vb: z
                    .number()
                    .min(0)
                    .nullable()
                    .describe(
                      'Upper edge: the next band’s lower edge (exclusive); for the top band the mempool’s highest rate (its first projected block’s, inclusive), null when the upstream gives none.',
                    ),
                  vsize: count('Virtual size of the mempool in this band, vB.'),
                  transaction_count: count('Transactions in this band (estimated, see counts).'),
                }),
              )
              .describe(
                'The mempool by fee-rate band, highest first; empty bands left out. The upstream’s buckets (each from its rate up to the next higher bucket’s) are grouped at mempool.space’s fee levels by their lowest rate, and a band’s bounds are those of its buckets.',
              ),
            counts: z
              .literal('estimated_from_mean_vsize')
              .describe(
                'The upstream histogram gives vsize per rate, not counts: each band’s count is its vsize at the mempool’s mean transaction size, rounded so they add up to the total.',
              ),
          })
          .describe("The mempool's fee histogram as bands."),
        projected_blocks: z
          .array(
            z.strictObject({
              index: z.number().int().min(0).describe('0 is the next block.'),
              vsize: count('Virtual size, vB (the last one may exceed 1,000,000: the rest of the mempool).'),
              transaction_count: count('Transactions.'),
              total_fees_sat: count('Fees, sats.'),
              median_fee_rate_sat_vb: rate('Median rate, sat/vB.'),
              min_fee_rate_sat_vb: rate('Lowest rate, sat/vB.'),
              max_fee_rate_sat_vb: rate('Highest rate, sat/vB.'),
              full: z.boolean().describe('At least 990,000 vB (3,960,000 WU): full.'),
              entry_fee_rate_sat_vb: rate(
                'The lowest rate it would include: the relay minimum (mempool.space’s minimum tier) while it has room, its 10th-percentile rate (at least the relay minimum) once full (docs/fee-rules.md#would-have-been-included).',
              ),
            }),
          )
          .describe('The mempool cut into the next blocks (at most 8).'),
        recent_blocks: z
          .array(
            z.strictObject({
              height: count('Block height.'),
              time: z.iso.datetime({ offset: true }).describe('Block time.'),
              transaction_count: count('Transactions, coinbase included.'),
              total_fees_sat: count('Fees, sats.'),
              fee_rates_sat_vb: FeeRatePercentilesSchema,
            }),
          )
          .min(1)
          .describe('The last blocks, newest first, with their fee-rate percentiles.'),
        trend: z
          .strictObject({
            direction: z.enum(TREND_DIRECTIONS),
            recent_median_sat_vb: rate('Mean of the median rates of the last 3 blocks.'),
            earlier_median_sat_vb: rate('Mean of the median rates of the 3 blocks before.'),
            change_percent: z.number().describe('100 × (recent − earlier) / earlier, one decimal.'),
            rule: z.string().describe('How the direction is named.'),
          })
          .describe('Whether block fee rates are rising or falling.'),
        environment: z
          .strictObject({
            name: z.enum(ENVIRONMENT_NAMES),
            rule: z.string().describe('The threshold that named it (fee-environment-v1).'),
          })
          .describe('A name for the fee environment, from documented thresholds.'),
        send_wait: z
          .strictObject({
            algorithm_version: z.literal('send-wait-v1'),
            decision: z.enum(DECISIONS),
            reason_codes: z.array(z.enum(REASON_CODES)).min(1).max(2),
            potential_savings: PotentialSavingsSchema,
          })
          .describe('The send-wait-v1 signal on the primary source’s tiers (the paid decision’s algorithm).'),
        costs: z
          .array(
            z.strictObject({
              tier: z.enum(['fastest', 'half_hour', 'hour', 'economy', 'minimum']),
              rate_sat_vb: rate('The primary source’s rate for the tier.'),
              fee_140_vbytes_sat: count('ceil(rate × 140): a one-input, two-output P2WPKH payment.'),
              fee_1000_vbytes_sat: count('ceil(rate × 1000): a larger transaction.'),
            }),
          )
          .length(5)
          .describe('What a 140 vB and a 1,000 vB transaction cost per tier. Illustrations, not guarantees.'),
      })
      .describe('The fee landscape.'),
    meta: ChainDataMetaSchema.extend({
      primary_source: z.string().describe('The estimator whose tiers the signal and costs use.'),
      algorithm_version: z.literal('send-wait-v1'),
      environment_version: z.literal('fee-environment-v1'),
    }),
  })
  .describe('Complete fee landscape (GET /api/v1/fees/landscape).');
export type FeeLandscape = z.infer<typeof FeeLandscapeSchema>;
