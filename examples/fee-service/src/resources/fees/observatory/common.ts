import * as z from 'zod';
import type { ErrorCodeSpec } from '../../../http/respond';

/** What the observatory's three resources share: their error, their provenance block. */

/** The history could not be read (its database is down): 503, never settled. */
export const HISTORY_UNAVAILABLE: ErrorCodeSpec = {
  status: 503,
  retryable: true,
  description:
    'The observatory history could not be read (its database is unavailable); nothing was charged.',
};

/**
 * The window or page asked for holds nothing to sell (a scoreboard with nothing judged, no
 * estimate recorded, no block): answered before any challenge, so it is never charged.
 */
export const NO_DATA: ErrorCodeSpec = {
  status: 404,
  retryable: false,
  description:
    'The window or page asked for holds nothing (no judged estimate, no recorded estimate or block); refused before any challenge, nothing charged. The message says why and what would have data.',
};

/** What a `sellable` check refuses with when the history cannot be read. */
export const historyUnreadable = {
  code: 'history_unavailable',
  message: 'the observatory history could not be read',
} as const;

/** `meta` of every observatory answer. */
export const ObservatoryMetaSchema = z
  .strictObject({
    generated_at: z.iso.datetime().describe('When this answer was computed'),
    tip_height: z.number().int().min(0).nullable().describe('Highest recorded block, null before the first'),
    recorded_blocks: z.number().int().min(0).describe('Blocks the history holds'),
    limitations: z.array(z.string()).describe('What the figures do not say'),
  })
  .describe('Provenance of the answer');

export const OBSERVATORY_LIMITATIONS = [
  'Rates and percentiles are sat/vB with three decimals (milli-sat precision); percentiles are by virtual size, from the block transactions where the upstream gives them, else from its fee range or getblockstats.',
  'An estimate is judged only once every block of its window is recorded; gaps (an upstream down, the recorder stopped) are reported as gaps and never filled in.',
  'Past accuracy does not guarantee future accuracy: a source that hit in calm blocks may miss in a spike.',
] as const;

/** `null` for undefined, so absent figures are explicit in JSON. */
export const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
