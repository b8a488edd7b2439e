import * as z from 'zod';
import { defineResource } from '../../../kit';
import { DASHBOARD_PASS, PRICE_0_005 } from '../../../shared/planned';
import { HISTORY_UNAVAILABLE, historyUnreadable, NO_DATA, OBSERVATORY_LIMITATIONS, orNull } from '../common';
import { BlockStatsBodySchema } from './schema';

/**
 * GET /api/v1/fees/observatory/block-stats (0.005 USDC): the recorded blocks' fee statistics,
 * newest first, `limit` per page (1–1,000, default 50), `before` a height for the next page. A
 * page with no block is not sold: 404 `no_data` before any challenge.
 */
export const observatoryBlockStats = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/block-stats',
  description: 'Per-block fee statistics',
  price: PRICE_0_005,
  gate: { signIn: DASHBOARD_PASS },
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'blocks', 'statistics'],
    operationId: 'getObservatoryBlockStats',
  },
  input: {
    queryParams: z.strictObject({
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(1000)
        .optional()
        .describe('Blocks per page, 1–1,000 (default 50)'),
      before: z.coerce
        .number()
        .int()
        .min(1)
        .max(100_000_000)
        .optional()
        .describe('Only blocks below this height (the previous page’s next_before)'),
    }),
  },
  output: BlockStatsBodySchema,
  errors: { history_unavailable: HISTORY_UNAVAILABLE, no_data: NO_DATA },
  needs: ['history'],
  async sellable(input, capabilities) {
    try {
      const { before } = input.query;
      const first = await capabilities.history.blockStats({ limit: 1, ...(before ? { before } : {}) });
      return first.length > 0 ? undefined : noBlocks(await capabilities.history.status(), before);
    } catch {
      return historyUnreadable;
    }
  },
  async handler({ input, capabilities, fail }) {
    const observatory = capabilities.history;
    const limit = input.query.limit ?? 50;
    try {
      const [rows, status] = await Promise.all([
        // one more than asked: whether there is a next page
        observatory.blockStats({
          limit: limit + 1,
          ...(input.query.before ? { before: input.query.before } : {}),
        }),
        observatory.status(),
      ]);
      const blocks = rows.slice(0, limit);
      if (blocks.length === 0) {
        const empty = noBlocks(status, input.query.before);
        return fail(empty.code, empty.message);
      }
      const body = {
        data: { blocks, next_before: rows.length > limit ? blocks.at(-1)!.height : null },
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

/** Why a page of blocks is empty. */
function noBlocks(
  status: { blocks: number; tip_height: number | undefined },
  before: number | undefined,
): { code: 'no_data'; message: string } {
  return {
    code: 'no_data',
    message:
      status.blocks === 0 || status.tip_height === undefined
        ? 'no block recorded yet'
        : `no recorded block below height ${before} (the history holds ${status.tip_height - status.blocks + 1} … ${status.tip_height})`,
  };
}
