import * as z from 'zod';
import { defineResource } from '../../../kit';
import { PRICE_0_005 } from '../../../shared/planned';
import { HISTORY_UNAVAILABLE, OBSERVATORY_LIMITATIONS, orNull } from '../common';
import { ScoreboardBodySchema } from './schema';

export const SCORING_RULES = {
  hit: 'an estimate q for target k at tip h hits when q ≥ p10 of at least one of the blocks h+1 … h+k',
  overpay:
    'a hit overpays when q > p75 of its first fit (the first block with p10 ≤ q); overpayment = q − p10(first fit)',
  cost: 'median_overpayment_sats_140 + 10 × miss_rate × 1000, ties by source name; horizons are never compared',
  quantiles: 'nearest rank; overpayments in sats are exact below 256 and within 1.6 % above',
} as const;

/**
 * GET /api/v1/fees/observatory/scoreboard (0.005 USDC): every estimator's accuracy per horizon
 * over a window of whole hours, ranked by cost within each horizon, with the evidence (n, blocks,
 * polls) behind each row.
 */
export const observatoryScoreboard = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/scoreboard',
  description: 'Fee estimator accuracy scoreboard',
  price: PRICE_0_005,
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'estimators', 'accuracy'],
    operationId: 'getObservatoryScoreboard',
  },
  input: {
    queryParams: z.strictObject({
      hours: z.coerce
        .number()
        .int()
        .min(1)
        .max(720)
        .optional()
        .describe('Window in whole clock hours, the current one included (default 168, at most 720)'),
    }),
  },
  output: ScoreboardBodySchema,
  errors: { history_unavailable: HISTORY_UNAVAILABLE },
  needs: ['history'],
  async handler({ input, capabilities, fail }) {
    const observatory = capabilities.history;
    try {
      const [board, status] = await Promise.all([
        observatory.scoreboard({ hours: input.query.hours ?? 168 }),
        observatory.status(),
      ]);
      const body = {
        data: {
          window: board.window,
          horizons: board.horizons,
          rows: board.rows.map((row) => ({
            rank: row.rank,
            source: row.source,
            target: row.target,
            n: row.n,
            blocks: row.blocks,
            polls: row.polls,
            hit_rate: orNull(row.hit_rate),
            miss_rate: orNull(row.miss_rate),
            within_rate: orNull(row.within_rate),
            overpay_rate: orNull(row.overpay_rate),
            median_overpayment_sat_vb: orNull(row.median_overpayment_sat_vb),
            p90_overpayment_sat_vb: orNull(row.p90_overpayment_sat_vb),
            median_overpayment_sats_140: orNull(row.median_overpayment_sats_140),
            p90_overpayment_sats_140: orNull(row.p90_overpayment_sats_140),
            availability: orNull(row.availability),
            cost: orNull(row.cost),
          })),
          ...(board.empty_reason ? { empty_reason: board.empty_reason } : {}),
          scoring: SCORING_RULES,
        },
        meta: {
          generated_at: new Date().toISOString(),
          tip_height: orNull(status.tip_height),
          recorded_blocks: status.blocks,
          limitations: [...OBSERVATORY_LIMITATIONS],
        },
      };
      return { status: 200, headers: { 'cache-control': 'no-store' }, body };
    } catch {
      return fail('history_unavailable');
    }
  },
});
