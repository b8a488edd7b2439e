import * as z from 'zod';
import { answerAnalystQuestion } from '../../../analysis/analyst/analyst';
import { ANALYST_STEPS, MAX_ANALYST_STEPS, type StepName } from '../../../analysis/analyst/plan';
import { defineResource, type ResourceRefusal } from '../../kit';
import { knowledgeIndex, QuestionSchema } from '../chat/resource';
import { AI_ERROR_CODES, aiAnswer, aiRateLimit, readMarket, requireSnapshot } from '../shared/answer';
import { AnalystBodySchema } from './schema';
import { analystToolbox } from './toolbox';

export const ANALYST_ALGORITHM = 'analyst-v1';
/** 0.05 USDC in atomic units (docs/fee-service-contract.md#price-patterns), catalog max timeout. */
export const PRICE_0_05 = { amount: '50000', maxTimeoutSeconds: 300 } as const;

const STEP_LIST = z
  .string()
  .regex(/^[a-z_]+(?:,[a-z_]+)*$/, `must be a comma-separated list of ${ANALYST_STEPS.join(', ')}`)
  .transform((text) => [...new Set(text.split(','))])
  .pipe(z.array(z.enum(ANALYST_STEPS)).max(ANALYST_STEPS.length))
  .describe(`Steps to run instead of the planner's choice, in order: ${ANALYST_STEPS.join(', ')}`)
  .meta({ examples: ['preview,decision,fee_advice'] });

export const AnalystQuerySchema = z.strictObject({
  q: QuestionSchema,
  steps: STEP_LIST.optional(),
  max_steps: z
    .string()
    .regex(/^[1-9][0-9]*$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_ANALYST_STEPS))
    .optional()
    .describe(`Most steps to run, 1–${MAX_ANALYST_STEPS} (default ${MAX_ANALYST_STEPS})`),
});

const ANALYST_ERRORS = {
  unknown_transaction: AI_ERROR_CODES.unknown_transaction,
  unknown_block: AI_ERROR_CODES.unknown_block,
  upstream_unavailable: AI_ERROR_CODES.upstream_unavailable,
  out_of_domain: AI_ERROR_CODES.out_of_domain,
  no_validated_snapshot: AI_ERROR_CODES.no_validated_snapshot,
} as const;

/** A txid, block hash or "block N" makes a question the analyst's even without a domain word. */
const NAMES_A_TARGET = /\b[0-9a-f]{64}\b|\bblock\s+#?\d{1,9}\b/i;

/**
 * GET /api/v1/analyst?q= (0.05): plans the steps that together answer the question (or takes
 * `steps`), runs them in process within a step and time budget, and reports each step with its
 * evidence and a conclusion that combines them: what to do, with the numbers and the caveats
 * (docs/ai-resources.md#analyst). With a model, the model reads the same facts, may add steps by
 * tool calls, and writes the narrative.
 */
export const analyst = defineResource({
  method: 'GET',
  path: '/api/v1/analyst',
  description: 'Multi-step AI analyst',
  price: PRICE_0_05,
  // Its handler acts or costs: one balance never pays for two runs (docs/reliability.md).
  gate: { reserveBalance: true },
  // Priced by the `/api/v1/analyst*` pattern and listed under it, with no resource URL of its own
  // in the catalog (docs/fee-service-contract.md#price-patterns).
  discovery: {
    category: 'ai',
    keywords: ['bitcoin', 'fees', 'analyst', 'ai', 'agent'],
    operationId: 'analyst',
    listed: false,
  },
  input: { queryParams: AnalystQuerySchema },
  output: AnalystBodySchema,
  errors: ANALYST_ERRORS,
  needs: ['snapshots', 'bitcoin'],
  rateLimit: aiRateLimit,
  precondition: requireSnapshot,
  check(input): ResourceRefusal<keyof typeof ANALYST_ERRORS> | undefined {
    if (input.query.steps || NAMES_A_TARGET.test(input.query.q)) return undefined;
    const retrieval = knowledgeIndex().retrieve(input.query.q);
    return retrieval.inDomain ? undefined : { code: 'out_of_domain', message: retrieval.reason };
  },
  async handler({ input, capabilities, env, requestId, fail }) {
    const read = readMarket(capabilities, requestId);
    if ('error' in read) return read.error;
    const { q, steps, max_steps } = input.query;
    const answer = await answerAnalystQuestion({
      question: q,
      budgetMs: env.config.ai.analystBudgetMs,
      toolbox: analystToolbox(capabilities, read.market),
      ...(capabilities.languageModel ? { model: capabilities.languageModel } : {}),
      ...(steps ? { requested: steps as StepName[] } : {}),
      ...(max_steps ? { maxSteps: max_steps } : {}),
    });
    const { verdict } = answer;
    if (verdict.kind === 'not_found') {
      const block = answer.steps.some((s) => s.status === 'not_found' && s.step === 'explain_block');
      return fail(block ? 'unknown_block' : 'unknown_transaction', verdict.message);
    }
    if (verdict.kind === 'bad_input') return fail('invalid_request', verdict.message);
    if (verdict.kind === 'unavailable')
      return fail('upstream_unavailable', verdict.message, { 'retry-after': '10' });
    const facts = {
      question: q,
      intents: answer.intents,
      planned_by: answer.planned_by,
      steps: answer.steps.map(({ findings: _findings, ...step }) => step),
      dropped: answer.dropped,
      conclusion: verdict.conclusion,
      synthesis: verdict.synthesis,
    };
    return aiAnswer({
      reading: read.reading,
      algorithm: ANALYST_ALGORITHM,
      facts,
      prose: { ...answer.provenance, prose: verdict.prose },
    });
  },
});
