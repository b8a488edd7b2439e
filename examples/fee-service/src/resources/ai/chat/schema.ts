import * as z from 'zod';
import { aiBodySchema } from '../shared/schema';

export const ChatFactsSchema = z
  .strictObject({
    question: z.string(),
    entries: z
      .array(
        z.strictObject({
          id: z.string().describe('Knowledge-base entry, cited in the prose as [id]'),
          title: z.string(),
          score: z.number(),
          matched: z.array(z.string()).describe('Terms of the question it matched'),
          sources: z
            .array(z.strictObject({ title: z.string(), url: z.string() }))
            .describe('Public sources of its facts'),
        }),
      )
      .min(1),
    live_figures: z
      .array(
        z.strictObject({
          name: z.string(),
          value: z.number(),
          unit: z.enum(['sat/vB', 'vB', 'transactions', 'blocks', 'height']),
        }),
      )
      .describe('Figures from the validated snapshot, cited in the prose as [live]'),
  })
  .describe('What the answer was built from');

export const ChatBodySchema = aiBodySchema(ChatFactsSchema, 'Answer to a Bitcoin fee question');
