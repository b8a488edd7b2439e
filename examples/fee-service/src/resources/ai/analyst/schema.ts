import * as z from 'zod';
import { ANALYST_STEPS } from '../../../analysis/analyst/plan';
import { aiBodySchema } from '../shared/schema';

export const AnalystFactsSchema = z
  .strictObject({
    question: z.string(),
    planned_by: z.enum(['rules', 'model']).describe('Who chose the steps'),
    steps: z.array(
      z.strictObject({
        step: z.enum(ANALYST_STEPS),
        args: z.record(z.string(), z.string()),
        why: z.string().describe('The rule (or the model) that chose it'),
        status: z.enum(['ok', 'not_found', 'bad_input', 'unavailable', 'failed', 'timed_out']),
        summary: z.string(),
        evidence: z.unknown().describe('The facts the step computed (its resource’s facts)'),
        duration_ms: z.number().min(0),
      }),
    ),
    dropped: z
      .array(z.strictObject({ step: z.enum(ANALYST_STEPS), why: z.string() }))
      .describe('Planned steps past max_steps'),
    conclusion: z.string().describe('The most decisive step’s finding'),
  })
  .describe('The analyst’s report: each step, its evidence and the conclusion');

export const AnalystBodySchema = aiBodySchema(AnalystFactsSchema, 'Multi-step analyst report');
