import { numbersOfFacts, ungroundedNumbers } from './grounding';
import { type LanguageModel, ModelFailure, type ModelFailureReason } from './model';

/** What produced an answer's prose, as reported in every AI answer. */
export interface ProseProvenance {
  /** `deterministic`, or the model's name when its prose was used. */
  provider: string;
  /** The model that was asked, null when none is configured. */
  model: string | null;
  /** Why the model's prose was not used (only when a model is configured and fell back). */
  fallback: { reason: ModelFailureReason; message: string; ungrounded?: string[] } | null;
}

export interface ProseResult extends ProseProvenance {
  prose: string;
}

/** The instructions every prose request carries. */
export const PROSE_SYSTEM_PROMPT = [
  'You explain Bitcoin fee, mempool, transaction and block data to a non-expert in plain English.',
  'Write at most 120 words of prose from the FACTS only. Do not give advice the facts do not support.',
  'Use only numbers that appear in the FACTS, written as they appear there (you may round decimals).',
  'Say that heuristics are guesses. No lists, no headings, no code.',
].join(' ');

/**
 * The prose of an AI answer: the model's when one is configured, answers in time and states only
 * numbers found in the facts (or in the deterministic prose, which is made from them); otherwise
 * the deterministic prose, with the reason it was used. Never throws.
 */
export async function writeProse(options: {
  model: LanguageModel | undefined;
  /** What is being explained, e.g. "a Bitcoin transaction". */
  subject: string;
  facts: unknown;
  deterministic: string;
  /** The client's question, for chat and the analyst. */
  question?: string;
  signal?: AbortSignal;
}): Promise<ProseResult> {
  const { model, deterministic } = options;
  if (!model) return { provider: 'deterministic', model: null, fallback: null, prose: deterministic };
  const fallback = (failure: ModelFailure, ungrounded?: string[]): ProseResult => ({
    provider: 'deterministic',
    model: model.name,
    fallback: { reason: failure.reason, message: failure.message, ...(ungrounded ? { ungrounded } : {}) },
    prose: deterministic,
  });
  try {
    const turn = await model.complete({
      messages: [
        { role: 'system', content: PROSE_SYSTEM_PROMPT },
        {
          role: 'user',
          content: [
            `Explain ${options.subject}.`,
            ...(options.question ? [`QUESTION: ${options.question}`] : []),
            `FACTS: ${JSON.stringify(options.facts)}`,
            `DRAFT (accurate, improve its wording): ${deterministic}`,
          ].join('\n'),
        },
      ],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const prose = turn.content?.trim() ?? '';
    if (prose.length === 0) throw new ModelFailure('empty_response', 'the model returned no prose');
    const allowed = numbersOfFacts(options.facts);
    numbersOfFacts(deterministic, allowed);
    const bad = ungroundedNumbers(prose, allowed);
    if (bad.length > 0) {
      return fallback(
        new ModelFailure('ungrounded_numbers', 'the model stated numbers that are not in the facts'),
        bad,
      );
    }
    return { provider: model.name, model: model.name, fallback: null, prose };
  } catch (error) {
    if (error instanceof ModelFailure) return fallback(error);
    return fallback(new ModelFailure('upstream_error', (error as Error)?.message ?? 'model call failed'));
  }
}
