import * as z from 'zod';
import type { Scoreboard } from '../../../../capabilities/observatory/observatory';
import { defineResource } from '../../../kit';
import { DASHBOARD_PASS, PRICE_0_005 } from '../../../shared/planned';
import { HISTORY_UNAVAILABLE, historyUnreadable, NO_DATA, OBSERVATORY_LIMITATIONS, orNull } from '../common';
import { ScoreboardBodySchema } from './schema';

export const SCORING_RULES = {
  hit: 'an estimate q for target k at tip h hits when q would have been included in at least one of the blocks h+1 … h+k: q ≥ the block’s entry rate, its relay minimum when it had room, else max(relay minimum, p10) when it was full (weight ≥ 3,960,000 WU); block-stats gives each block’s entry_rate',
  overpay:
    'overpayment = q − entry rate of the first fit (the first block that would have included q); a hit overpays when q > p75 of its first fit',
  cost: 'median_overpayment_sats_140 + 10 × miss_rate × median_miss_entry_fee_sats_140 (a miss costs ten times the fee that would have been included within the target), ties by source name; horizons are never compared; rows with nothing judged are not ranked',
  quantiles: 'nearest rank; overpayments in sats are exact below 256 and within 1.6 % above',
} as const;

/** Default window, hours. */
const DEFAULT_HOURS = 168;

/**
 * GET /api/v1/fees/observatory/scoreboard (0.005 USDC): every estimator's accuracy per horizon
 * over a window of whole hours, ranked by cost within each horizon, with the evidence (n, blocks,
 * polls) behind each row. A window with nothing judged is not sold: 404 `no_data` before any
 * challenge.
 */
export const observatoryScoreboard = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/scoreboard',
  description: 'Fee estimator accuracy scoreboard',
  price: PRICE_0_005,
  gate: { signIn: DASHBOARD_PASS },
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
  errors: { history_unavailable: HISTORY_UNAVAILABLE, no_data: NO_DATA },
  needs: ['history'],
  async sellable(input, capabilities) {
    try {
      const board = await capabilities.history.scoreboard({ hours: input.query.hours ?? DEFAULT_HOURS });
      return nothingJudged(board);
    } catch {
      return historyUnreadable;
    }
  },
  async handler({ input, capabilities, fail }) {
    const observatory = capabilities.history;
    try {
      const [board, status] = await Promise.all([
        observatory.scoreboard({ hours: input.query.hours ?? DEFAULT_HOURS }),
        observatory.status(),
      ]);
      // Emptied since the check before the challenge (retention): refused, so never settled.
      const empty = nothingJudged(board);
      if (empty) return fail(empty.code, empty.message);
      const body = {
        data: {
          window: board.window,
          horizons: board.horizons,
          rows: board.rows.map((row) => ({
            rank: orNull(row.rank),
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
            median_miss_entry_fee_sats_140: orNull(row.median_miss_entry_fee_sats_140),
            availability: orNull(row.availability),
            cost: orNull(row.cost),
          })),
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

/** Why a scoreboard has nothing to sell (no estimate judged in its window), or undefined. */
function nothingJudged(board: Scoreboard): { code: 'no_data'; message: string } | undefined {
  if (board.rows.some((row) => row.n > 0)) return undefined;
  const where = `between ${board.window.from} and ${board.window.to}`;
  return {
    code: 'no_data',
    message: board.empty_reason
      ? `nothing to score ${where}: ${board.empty_reason}`
      : `no estimate observed ${where} has been judged yet: an estimate is judged once the last block of its window is recorded (a next-block quote at the next block, a 144-block one a day later); ask for more hours`,
  };
}
