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
