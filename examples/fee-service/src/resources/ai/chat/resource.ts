import * as z from 'zod';
import { answerQuestion, understandQuestion } from '../../../analysis/chat/answer';
import { createKnowledgeIndex, type KnowledgeIndex } from '../../../analysis/chat/retrieve';
import { writeProse } from '../../../capabilities/language-model/prose';
import { defineResource, type ResourceRefusal } from '../../kit';
import { PRICE_0_01 } from '../../shared/planned';
import { AI_ERROR_CODES, aiAnswer, aiRateLimit, readMarket, requireSnapshot } from '../shared/answer';
import { ChatBodySchema } from './schema';

export const CHAT_ALGORITHM = 'chat-v1';
/** Longest question accepted, characters. */
export const MAX_QUESTION_LENGTH = 500;

let index: KnowledgeIndex | undefined;
/** The knowledge base's index, built on first use and shared (it never changes at run time). */
export const knowledgeIndex = (): KnowledgeIndex => {
  index ??= createKnowledgeIndex();
  return index;
};

export const QuestionSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_QUESTION_LENGTH, `must be at most ${MAX_QUESTION_LENGTH} characters`)
  .describe('The question (1 to 500 characters)')
  .meta({ examples: ['Why are fees high today?'] });

const CHAT_ERRORS = {
  out_of_domain: AI_ERROR_CODES.out_of_domain,
  no_validated_snapshot: AI_ERROR_CODES.no_validated_snapshot,
} as const;

/**
 * GET /api/v1/ai/chat?q= (0.01): computes what the question asks (fees for a size and rate, RBF
 * against CPFP, units, block times, the next block's rate, the subsidy…), then answers from the
 * project's knowledge base (MiniSearch) and the live figures of the validated snapshot, citing all
 * three. A question outside the domain is refused 422 before any challenge (docs/ai-resources.md#chat).
 */
export const chat = defineResource({
  method: 'GET',
  path: '/api/v1/ai/chat',
  description: 'Bitcoin knowledge chatbot',
  price: PRICE_0_01,
  // Its handler acts or costs: one balance never pays for two runs (docs/reliability.md).
  gate: { reserveBalance: true },
  discovery: { category: 'ai', keywords: ['bitcoin', 'chat', 'ai'], operationId: 'chat' },
  input: { queryParams: z.strictObject({ q: QuestionSchema }) },
  output: ChatBodySchema,
  errors: CHAT_ERRORS,
  needs: ['snapshots'],
  rateLimit: aiRateLimit,
  precondition: requireSnapshot,
  check(input): ResourceRefusal<keyof typeof CHAT_ERRORS> | undefined {
    const understood = understandQuestion(input.query.q, knowledgeIndex());
    return understood.inDomain ? undefined : { code: 'out_of_domain', message: understood.reason };
  },
  async handler({ input, capabilities, requestId, fail }) {
    const read = readMarket(capabilities, requestId);
    if ('error' in read) return read.error;
    const outcome = answerQuestion({ question: input.query.q, index: knowledgeIndex(), market: read.market });
    if (!outcome.ok) return fail('out_of_domain', outcome.reason);
    const prose = await writeProse({
      model: capabilities.languageModel,
      subject:
        'the answer to this question: first what was computed (cited as [computed]), then entries as [id] and live figures as [live]',
      question: input.query.q,
      facts: outcome.facts,
      deterministic: outcome.prose,
    });
    return aiAnswer({ reading: read.reading, algorithm: CHAT_ALGORITHM, facts: outcome.facts, prose });
  },
});
