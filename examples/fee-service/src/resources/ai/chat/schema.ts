import * as z from 'zod';
import { COMPUTATION_KINDS } from '../../../analysis/chat/compute';
import { aiBodySchema } from '../shared/schema';

const FigureSchema = z.strictObject({ name: z.string(), value: z.number(), unit: z.string() });

export const ComputationSchema = z
  .strictObject({
    kind: z.enum(COMPUTATION_KINDS),
    inputs: z
      .array(FigureSchema)
      .describe('The figures it was computed from: stated in the question, or live'),
    results: z.array(FigureSchema),
    rule: z.string().describe('The rule, as a formula in words'),
    assumptions: z
      .array(z.string())
      .describe('What the question left out and was assumed, and what is not promised'),
    text: z.string().describe('The answer, cited in the prose as [computed]'),
  })
  .describe('One calculation the question asked for (docs/ai-resources.md#what-the-chat-computes)');

export const ChatFactsSchema = z
  .strictObject({
    question: z.string(),
    computed: z
      .array(ComputationSchema)
      .describe('What the question asked to be computed, in the order answered'),
    entries: z
      .array(
        z.strictObject({
          id: z.string().describe('Knowledge-base entry, cited in the prose as [id]'),
          title: z.string(),
          score: z.number(),
          matched: z.array(z.string()).describe('Terms of the question it matched'),
          cited_for: z
            .enum(['computation', 'search'])
            .describe('Cited to explain a calculation, or because the search matched it'),
          sources: z
            .array(z.strictObject({ title: z.string(), url: z.string() }))
            .describe('Public sources of its facts'),
        }),
      )
      .describe('Knowledge-base entries cited (empty only when a calculation answers alone)'),
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
