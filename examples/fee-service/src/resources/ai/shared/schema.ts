import * as z from 'zod';
import { MODEL_FAILURE_REASONS } from '../../../capabilities/language-model/model';

/** What every AI answer shares: who wrote the prose, and where its data came from. */

export const TiersSchema = z
  .strictObject({
    fastest: z.number().min(0).describe('Next-block tier, sat/vB'),
    half_hour: z.number().min(0).describe('About three blocks, sat/vB'),
    hour: z.number().min(0).describe('About six blocks, sat/vB'),
    economy: z.number().min(0).describe('A day or so, sat/vB'),
    minimum: z.number().min(0).describe('Lowest rate nodes keep, sat/vB'),
  })
  .describe('Fee tiers of the validated snapshot');

export const ModelProvenanceSchema = z
  .strictObject({
    name: z.string().nullable().describe('The configured model, null when none is configured'),
    used: z.boolean().describe('Whether the prose is the model’s'),
    fallback: z
      .strictObject({
        reason: z.enum(MODEL_FAILURE_REASONS).describe('Why the model’s prose was not used'),
        message: z.string().describe('What happened'),
        ungrounded: z.array(z.string()).optional().describe('Numbers the model stated that no fact supports'),
      })
      .nullable()
      .describe('Set when a configured model was asked and its prose was not used'),
  })
  .describe('The language model behind the prose');

export const AiMetaSchema = z
  .strictObject({
    snapshot_schema: z.string().describe('Label of the upstream snapshot format'),
    snapshot_digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/)
      .describe('SHA-256 of the canonical snapshot the market figures come from'),
    source: z.string().describe('Upstream the snapshot came from'),
    fetched_at: z.iso.datetime().describe('When the upstream answered'),
    age_seconds: z.number().min(0).describe('Age of the snapshot at response time'),
    stale: z.boolean().describe('Whether the snapshot is older than 30 s (or a newer block was seen)'),
    algorithm_version: z.string().describe('Version of the deterministic analysis'),
    model: ModelProvenanceSchema,
  })
  .describe('Provenance of the answer');

/** The body of an AI answer: `data` holds provider, facts and prose; `meta` the provenance. */
export function aiBodySchema<F extends z.ZodType>(facts: F, description: string) {
  return z
    .strictObject({
      data: z.strictObject({
        provider: z.string().describe('`deterministic`, or the name of the model that wrote the prose'),
        facts: facts,
        prose: z.string().describe('Plain-language explanation written from the facts only'),
      }),
      meta: AiMetaSchema,
    })
    .describe(description);
}
