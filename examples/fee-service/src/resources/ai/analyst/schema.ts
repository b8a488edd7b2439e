import * as z from 'zod';
import { ANALYST_INTENTS, ANALYST_STEPS } from '../../../analysis/analyst/plan';
import { aiBodySchema } from '../shared/schema';

export const AnalystFactsSchema = z
  .strictObject({
    question: z.string(),
    intents: z
      .array(z.enum(ANALYST_INTENTS))
      .min(1)
      .describe('What the question is after, the first answered by the conclusion'),
    planned_by: z
      .enum(['rules', 'rules_and_model'])
      .describe('Who chose the steps: the rules, or the rules and then the model by tool calls'),
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
    conclusion: z.string().describe('What to do, combined from the steps’ findings, with the numbers'),
    synthesis: z
      .strictObject({
        intent: z.enum(ANALYST_INTENTS),
        action: z
          .enum(['send', 'wait', 'bump', 'nothing_to_do', 'none'])
          .describe('What the conclusion advises'),
        conclusion: z.string(),
        figures: z
          .array(
            z.strictObject({
              name: z.string(),
              value: z.number(),
              unit: z.string(),
              from: z.enum(ANALYST_STEPS).describe('The step whose evidence holds it'),
            }),
          )
          .describe('Every number the conclusion states'),
        caveats: z
          .array(z.string())
          .describe('What the figures do not promise, and what the evidence lacked'),
        combined: z.array(z.enum(ANALYST_STEPS)).describe('The steps whose findings the conclusion combines'),
      })
      .nullable()
      .describe('How the conclusion was combined; null when only steps without findings ran'),
  })
  .describe('The analyst’s report: each step, its evidence and the conclusion');

export const AnalystBodySchema = aiBodySchema(AnalystFactsSchema, 'Multi-step analyst report');
