import * as z from 'zod';
import { decodeCursor, type Observatory } from '../../../../capabilities/observatory/observatory';
import { defineResource, type ResourceRefusal } from '../../../kit';
import { DASHBOARD_PASS, PRICE_0_005 } from '../../../shared/planned';
import { HISTORY_UNAVAILABLE, historyUnreadable, NO_DATA, OBSERVATORY_LIMITATIONS, orNull } from '../common';
import { EstimatesBodySchema } from './schema';

const DAY_MS = 86_400_000;

const ESTIMATES_ERRORS = {
  invalid_time_range: { status: 400, retryable: false, description: '`since` must be before `until`.' },
  invalid_cursor: {
    status: 400,
    retryable: false,
    description: 'The cursor is not one this service issued.',
  },
  unknown_source: {
    status: 400,
    retryable: false,
    description:
      '`source` is not an estimator the observatory records; the message lists those it does. Refused before any challenge.',
  },
  unknown_target: {
    status: 400,
    retryable: false,
    description:
      '`target` is not a horizon the observatory scores (for that source); the message lists those it does. Refused before any challenge.',
  },
  history_unavailable: HISTORY_UNAVAILABLE,
  no_data: NO_DATA,
} as const;

type EstimatesQuery = {
  source?: string | undefined;
  target?: number | undefined;
  since?: string | undefined;
  until?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
};

/** The observatory's query of a request (without `until`, the interval ends at the observatory's clock). */
function historyQuery(q: EstimatesQuery, limit: number) {
  const until = q.until ? Date.parse(q.until) : undefined;
  return {
    limit,
    ...(q.source ? { source: q.source } : {}),
    ...(q.target ? { target: q.target } : {}),
    ...(q.since ? { since: Date.parse(q.since) } : until !== undefined ? { since: until - DAY_MS } : {}),
    ...(until !== undefined ? { until } : {}),
    ...(q.cursor ? { cursor: decodeCursor(q.cursor)! } : {}),
  };
}

/** A source or target the observatory does not score, as the refusal that names what it does. */
async function unknownSeries(
  observatory: Observatory,
  q: EstimatesQuery,
): Promise<ResourceRefusal<keyof typeof ESTIMATES_ERRORS> | undefined> {
  if (q.source === undefined && q.target === undefined) return undefined;
  const series = await observatory.series();
  const list = (values: readonly (string | number)[]) => (values.length > 0 ? values.join(', ') : 'none yet');
  if (q.source !== undefined && !series.has(q.source)) {
    return {
      code: 'unknown_source',
      message: `source ${q.source} is not one the observatory records; it records ${list([...series.keys()])}`,
    };
  }
  if (q.target === undefined) return undefined;
  const targets =
    q.source !== undefined
      ? series.get(q.source)!
      : [...new Set([...series.values()].flat())].sort((a, b) => a - b);
  if (targets.includes(q.target)) return undefined;
  return {
    code: 'unknown_target',
    message: `target ${q.target} is not a horizon the observatory scores${q.source ? ` for ${q.source}` : ''}; it scores ${list(targets)} blocks`,
  };
}

/** Why a page of estimates is empty. */
function noEstimates(q: EstimatesQuery, recordedBlocks: number): { code: 'no_data'; message: string } {
  return {
    code: 'no_data',
    message:
      recordedBlocks === 0
        ? 'nothing recorded yet'
        : `no estimate${q.source ? ` of ${q.source}` : ''}${q.target ? ` for target ${q.target}` : ''} observed in this interval${q.cursor ? ' after the cursor' : ''}`,
  };
}

/**
 * GET /api/v1/fees/observatory/estimates (0.005 USDC): the recorded estimates with their verdicts,
 * oldest first, filtered by `source`, `target` and `since`/`until` (default the last 24 hours),
 * `limit` per page (1–10,000, default 1,000), paged with an opaque `cursor`; the gaps of the
 * interval are listed beside them. Before any challenge: a source or target the observatory does
 * not score is refused (400 `unknown_source`, `unknown_target`), and an interval with no recorded
 * estimate is not sold (404 `no_data`).
 */
export const observatoryEstimates = defineResource({
  method: 'GET',
  path: '/api/v1/fees/observatory/estimates',
  description: 'Fee estimate history from multiple sources',
  price: PRICE_0_005,
  gate: { signIn: DASHBOARD_PASS },
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
  errors: ESTIMATES_ERRORS,
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
  async sellable(input, capabilities) {
    try {
      const unknown = await unknownSeries(capabilities.history, input.query);
      if (unknown) return unknown;
      const [first, status] = await Promise.all([
        capabilities.history.estimates(historyQuery(input.query, 1)),
        capabilities.history.status(),
      ]);
      return first.rows.length > 0 ? undefined : noEstimates(input.query, status.blocks);
    } catch {
      return historyUnreadable;
    }
  },
  async handler({ input, capabilities, fail }) {
    const observatory = capabilities.history;
    const q = input.query;
    try {
      const status = await observatory.status();
      const page = await observatory.estimates(historyQuery(q, q.limit ?? 1000));
      if (page.rows.length === 0) {
        const empty = noEstimates(q, status.blocks);
        return fail(empty.code, empty.message);
      }
      const body = {
        data: {
          estimates: page.rows,
          next_cursor: page.next_cursor,
          since: page.since,
          until: page.until,
          gaps: page.gaps,
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
