// The question corpus: questions a Bitcoin fee practitioner asks the chat and the analyst, each
// with the facts its answer must contain. Facts are either fixed (worked out by hand: 2.5 × 141 =
// 352.5, so 353 sats) or computed here from what the service's other resources report on the same
// market (the free preview's tiers, the paid decision, next block, landscape and scoreboard), so a
// wrong answer — one that does not compute, rounds down, names the wrong estimator, answers only
// one step or says "1 blocks" — misses at least one of them.
import { ANALYST_QUESTIONS } from './analyst-questions';
import { CHAT_QUESTIONS } from './chat-questions';
import type { CorpusQuestion } from './world';

export { type CorpusQuestion, fee, rate, sats, type World } from './world';

export const CORPUS: readonly CorpusQuestion[] = [...CHAT_QUESTIONS, ...ANALYST_QUESTIONS];
