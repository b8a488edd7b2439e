import * as z from 'zod';
import { decodeCursor } from '../../../../observatory/observatory';
import { defineResource, type ResourceRefusal } from '../../../kit';
import { PRICE_0_005 } from '../../../shared/planned';
import { HISTORY_UNAVAILABLE, OBSERVATORY_LIMITATIONS, orNull } from '../common';
import { EstimatesBodySchema } from './schema';

const DAY_MS = 86_400_000;

const ESTIMATES_ERRORS = {
  invalid_time_range: { status: 400, retryable: false, description: '`since` must be before `until`.' },
  invalid_cursor: {
    status: 400,
    retryable: false,
    description: 'The cursor is not one this service issued.',
  },
  history_unavailable: HISTORY_UNAVAILABLE,
} as const;

/**
 * GET /api/v1/fees/observatory/estimates (0.005 USDC): the recorded estimates with their verdicts,
 * oldest first, filtered by `source`, `target` and `since`/`until` (default the last 24 hours),
 * `limit` per page (1–10,000, default 1,000), paged with an opaque `cursor`; the gaps of the
 * interval are listed beside them.
 */
export const observatoryEstimates = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/estimates',
  description: 'Fee estimate history from multiple sources',
  price: PRICE_0_005,
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'estimates', 'history'],
    operationId: 'getObservatoryEstimates',
  },
  input: {
    queryParams: z.strictObject({
      source: z
        .string()
        .regex(
          /^[a-z0-9*][a-z0-9._-]{0,63}$/,
          'must be a source name such as mempool.space or core-economical',
        )
        .optional()
        .describe('Only this estimator'),
      target: z.coerce
        .number()
        .int()
        .min(1)
        .max(1008)
        .optional()
        .describe('Only this confirmation target, blocks'),
      since: z.iso
        .datetime({ offset: true })
        .optional()
        .describe('Observed at or after (RFC 3339); default until − 24 h'),
      until: z.iso.datetime({ offset: true }).optional().describe('Observed before (RFC 3339); default now'),
      cursor: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/)
        .optional()
        .describe('next_cursor of the previous page'),
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(10_000)
        .optional()
        .describe('Estimates per page, 1–10,000 (default 1,000)'),
    }),
  },
  output: EstimatesBodySchema,
  errors: {
    invalid_time_range: { status: 400, retryable: false, description: '`since` must be before `until`.' },
    invalid_cursor: {
      status: 400,
      retryable: false,
      description: 'The cursor is not one this service issued.',
    },
    history_unavailable: HISTORY_UNAVAILABLE,
  },
  needs: ['history'],
  check(input): ResourceRefusal<keyof typeof ESTIMATES_ERRORS> | undefined {
    const { since, until, cursor } = input.query;
    if (since && until && Date.parse(since) >= Date.parse(until)) {
      return { code: 'invalid_time_range', message: `since (${since}) must be before until (${until})` };
    }
    if (cursor !== undefined && !decodeCursor(cursor)) {
      return { code: 'invalid_cursor', message: 'cursor is not a next_cursor of this service' };
    }
    return undefined;
  },
  async handler({ input, capabilities, fail }) {
    const observatory = capabilities.history;
    const q = input.query;
    try {
      const status = await observatory.status();
      // Without `until`, the interval ends at the observatory's own clock (the simulator's, offline).
      const until = q.until ? Date.parse(q.until) : undefined;
      const page = await observatory.estimates({
        limit: q.limit ?? 1000,
        ...(q.source ? { source: q.source } : {}),
        ...(q.target ? { target: q.target } : {}),
        ...(q.since ? { since: Date.parse(q.since) } : until !== undefined ? { since: until - DAY_MS } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(q.cursor ? { cursor: decodeCursor(q.cursor)! } : {}),
      });
      const body = {
        data: {
          estimates: page.rows,
          next_cursor: page.next_cursor,
          since: page.since,
          until: page.until,
          gaps: page.gaps,
          ...(page.rows.length === 0
            ? {
                empty_reason:
                  status.blocks === 0
                    ? 'nothing recorded yet'
                    : `no estimate${q.source ? ` of ${q.source}` : ''}${q.target ? ` for target ${q.target}` : ''} observed in this interval${q.cursor ? ' after the cursor' : ''}`,
              }
            : {}),
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
