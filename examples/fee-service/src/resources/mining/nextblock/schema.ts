import * as z from 'zod';
import { ChainDataMetaSchema, FeeRatePercentilesSchema } from '../../shared/provenance';

const rate = (description: string) => z.number().min(0).describe(description);
const count = (description: string) => z.number().int().min(0).describe(description);

export const NextBlockSchema = z
  .strictObject({
    data: z
      .strictObject({
        height: count('Height the next block will have.'),
        basis: z
          .enum(['block_template', 'mempool_projection'])
          .describe("Bitcoin Core's getblocktemplate, or mempool.space's first projected block."),
        tip: z
          .strictObject({
            height: count('Height of the current tip.'),
            hash: z.string().regex(/^[0-9a-f]{64}$/),
            time: z.iso.datetime({ offset: true }).describe('Block time of the tip.'),
            age_seconds: count('Seconds since the tip’s block time (0 when its time is ahead of ours).'),
          })
          .describe('The current tip.'),
        expected: z
          .strictObject({
            mean_interval_seconds: z.literal(600).describe('Mean time between blocks.'),
            expected_in_seconds: z
              .literal(600)
              .describe(
                'Expected wait from now: block arrivals are memoryless, so the tip’s age does not shorten it.',
              ),
            expected_at: z.iso.datetime({ offset: true }).describe('Now plus the expected wait.'),
            probability_within: z
              .strictObject({
                '10_minutes': z.number().min(0).max(1),
                '30_minutes': z.number().min(0).max(1),
                '60_minutes': z.number().min(0).max(1),
              })
              .describe('1 − e^(−t/600): the chance a block arrives within t.'),
          })
          .describe('When the block is expected.'),
        transaction_count: count('Transactions, coinbase excluded.'),
        vsize: count('Virtual size of the transactions, vB.'),
        weight: count('Weight of the transactions (vsize × 4 when the upstream gives only vsize).'),
        block_full: z
          .boolean()
          .describe('True when the block holds 990,000 vB or more: entry then takes outbidding.'),
        fees: z
          .strictObject({
            total_sat: count('Fees of the block’s transactions, sats.'),
            subsidy_sat: count('Block subsidy at this height, sats.'),
            reward_sat: count('Subsidy plus fees, sats.'),
            fees_share_percent: rate('100 × fees / reward, one decimal.'),
          })
          .describe('What the miner earns.'),
        fee_rates_sat_vb: FeeRatePercentilesSchema,
        entry_fee_rate_sat_vb: rate('The rate a transaction needs to get into this block now.'),
        entry_rule: z.string().describe('How the entry rate was found.'),
        top_transactions: z
          .array(
            z.strictObject({
              txid: z.string().regex(/^[0-9a-f]{64}$/),
              fee_sat: count('Fee, sats.'),
              vsize: count('Virtual size, vB.'),
              fee_rate_sat_vb: rate('fee / vsize, sat/vB.'),
            }),
          )
          .describe('The highest-rate transactions, at most 10.'),
        top_transactions_basis: z
          .enum(['block_template', 'recent_arrivals_above_entry'])
          .describe('From the template, or (mempool.space) the newest arrivals at or above the entry rate.'),
        estimators: z
          .array(
            z.discriminatedUnion('status', [
              z.strictObject({
                source: z.string(),
                status: z.literal('ok'),
                fastest_sat_vb: rate('The source’s next-block rate.'),
                above_entry_sat_vb: z
                  .number()
                  .describe('fastest − entry rate, sat/vB (negative: it would miss).'),
                verdict: z
                  .enum(['gets_in', 'misses'])
                  .describe('Whether paying its fastest rate gets into this block.'),
                overpay_at_140_vbytes_sat: count(
                  'ceil(140 × fastest) − ceil(140 × entry) when above, else 0.',
                ),
              }),
              z.strictObject({ source: z.string(), status: z.literal('unavailable'), reason: z.string() }),
            ]),
          )
          .min(1)
          .describe("Each configured estimator's fastest rate against this block's entry rate."),
      })
      .describe('The projected next block.'),
    meta: ChainDataMetaSchema,
  })
  .describe('Next block prediction (GET /api/v1/mining/nextblock).');
export type NextBlock = z.infer<typeof NextBlockSchema>;
