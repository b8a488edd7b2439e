import { formatInt, formatRate, plural } from '../format';
import type { FeeMarket } from '../market';
import {
  type Computation,
  type ComputationKind,
  type RecognisedQuestion,
  recogniseComputations,
  runComputations,
} from './compute';
import { KNOWLEDGE_BASE, type LiveFigureGroup } from './knowledge-base';
import type { KnowledgeIndex, Retrieval } from './retrieve';

/** A live figure the answer used, with where it came from. */
export interface LiveFigure {
  name: string;
  value: number;
  unit: 'sat/vB' | 'vB' | 'transactions' | 'blocks' | 'height';
}

export interface ChatFacts {
  question: string;
  /** What the question asked to be computed, computed (docs/ai-resources.md#what-the-chat-computes). */
  computed: Computation[];
  entries: {
    id: string;
    title: string;
    score: number;
    matched: string[];
    /** Cited because a calculation needs explaining, or because the search matched it. */
    cited_for: 'computation' | 'search';
    sources: { title: string; url: string }[];
  }[];
  live_figures: LiveFigure[];
}

export type ChatOutcome = { ok: true; facts: ChatFacts; prose: string } | { ok: false; reason: string };

function liveFigures(groups: ReadonlySet<LiveFigureGroup>, market: FeeMarket): LiveFigure[] {
  const out: LiveFigure[] = [];
  if (groups.has('tiers')) {
    for (const [name, value] of Object.entries(market.tiers))
      out.push({ name: `${name}_fee_rate`, value, unit: 'sat/vB' });
  }
  if (groups.has('next_block')) {
    out.push({ name: 'next_block_floor', value: market.next_block_floor_sat_vb, unit: 'sat/vB' });
  }
  if (groups.has('mempool')) {
    out.push(
      { name: 'mempool_vsize', value: market.mempool_vsize, unit: 'vB' },
      { name: 'mempool_transactions', value: market.mempool_count, unit: 'transactions' },
      { name: 'projected_blocks', value: market.projected_block_count, unit: 'blocks' },
    );
  }
  if (groups.has('tip') && market.tip_height !== null)
    out.push({ name: 'tip_height', value: market.tip_height, unit: 'height' });
  return out;
}

/** "1 block's worth", "3 blocks' worth". */
const blocksWorth = (n: number) => (n === 1 ? "1 block's worth" : `${plural(n, 'block')}' worth`);

function liveSentence(figures: LiveFigure[]): string {
  const get = (name: string) => figures.find((f) => f.name === name)?.value;
  const parts: string[] = [];
  const fastest = get('fastest_fee_rate');
  if (fastest !== undefined) {
    parts.push(
      `the fastest rate is ${formatRate(fastest)}, half hour ${formatRate(get('half_hour_fee_rate')!)}, hour ${formatRate(get('hour_fee_rate')!)}, economy ${formatRate(get('economy_fee_rate')!)} and minimum ${formatRate(get('minimum_fee_rate')!)}`,
    );
  }
  const floor = get('next_block_floor');
  if (floor !== undefined) parts.push(`the next-block floor is ${formatRate(floor)}`);
  const vsize = get('mempool_vsize');
  if (vsize !== undefined) {
    parts.push(
      `the mempool holds ${plural(get('mempool_transactions')!, 'transaction')}, ${formatInt(vsize)} vB or ${blocksWorth(get('projected_blocks')!)}`,
    );
  }
  const tip = get('tip_height');
  if (tip !== undefined) parts.push(`the chain tip is block ${formatInt(tip)}`);
  return parts.length === 0 ? '' : `Right now ${parts.join('; ')}.`;
}

/** The knowledge-base entries that explain each calculation, cited beside its result. */
const ENTRIES_FOR: Readonly<Record<ComputationKind, readonly string[]>> = {
  fee_for_size: ['fee-rate'],
  rate_of_fee: ['fee-rate'],
  rate_units: ['estimatesmartfee'],
  vsize: ['vsize-weight'],
  amount_units: ['sats'],
  dust: ['minimum-relay-and-dust'],
  block_time: ['block-interval'],
  next_block_rate: ['next-block'],
  target_rate: ['fee-tiers'],
  subsidy: ['subsidy'],
  bump: ['rbf', 'cpfp'],
};
const ENTRY_BY_ID = new Map(KNOWLEDGE_BASE.map((e) => [e.id, e]));

export interface UnderstoodQuestion {
  retrieval: Retrieval;
  recognised: RecognisedQuestion;
  /** A question is in the domain when the knowledge base matches it or it asks for a calculation. */
  inDomain: boolean;
  reason: string;
}

/** What a question asks: the entries that match it and the calculations it names (no market needed). */
export function understandQuestion(question: string, index: KnowledgeIndex): UnderstoodQuestion {
  const retrieval = index.retrieve(question);
  const recognised = recogniseComputations(question);
  const inDomain = retrieval.inDomain || recognised.kinds.length > 0;
  return {
    retrieval,
    recognised,
    inDomain,
    reason: retrieval.inDomain ? '' : retrieval.reason,
  };
}

const firstSentence = (text: string) => `${text.split(/(?<=\.) /)[0]}`;

/**
 * Answers a question: first what it asks to be computed (fees for a size and rate, rounded up;
 * RBF against CPFP; units, sizes, block times, the next block's rate, the subsidy…), then the
 * knowledge-base entries that explain it (cited by id, with their public sources), then the live
 * figures those entries call for. A question outside the domain is refused with the reason.
 */
export function answerQuestion(options: {
  question: string;
  index: KnowledgeIndex;
  market: FeeMarket;
}): ChatOutcome {
  const understood = understandQuestion(options.question, options.index);
  if (!understood.inDomain) return { ok: false, reason: understood.reason };
  const computed = runComputations(understood.recognised, options.market);
  const retrieved = understood.retrieval.inDomain ? understood.retrieval.results : [];
  const cited: ChatFacts['entries'] = [];
  for (const id of computed.flatMap((c) => ENTRIES_FOR[c.kind])) {
    const entry = ENTRY_BY_ID.get(id)!;
    if (cited.some((e) => e.id === id)) continue;
    const hit = retrieved.find((r) => r.entry.id === id);
    cited.push({
      id,
      title: entry.title,
      score: hit?.score ?? 0,
      matched: hit?.matched ?? [],
      cited_for: 'computation',
      sources: entry.sources,
    });
  }
  // A calculation is explained by its own entries; the search's entries answer the other questions.
  for (const r of cited.length > 0 ? [] : retrieved) {
    if (cited.length >= 2) break;
    cited.push({
      id: r.entry.id,
      title: r.entry.title,
      score: r.score,
      matched: r.matched,
      cited_for: 'search',
      sources: r.entry.sources,
    });
  }
  const groups = new Set(cited.flatMap((e) => ENTRY_BY_ID.get(e.id)!.live));
  const figures = liveFigures(groups, options.market);
  const facts: ChatFacts = { question: options.question, computed, entries: cited, live_figures: figures };
  const parts: string[] = [];
  for (const c of computed) {
    parts.push(`${c.text} [computed]`);
  }
  const assumed = [...new Set(computed.flatMap((c) => c.assumptions))];
  if (assumed.length > 0) parts.push(`Assumed: ${assumed.join(' ')}`);
  if (computed.length > 0 && cited.length > 0) {
    parts.push(`Explained in ${cited.map((e) => `“${e.title}” [${e.id}]`).join(', ')}.`);
  } else {
    cited.forEach((e, i) => {
      const text = ENTRY_BY_ID.get(e.id)!.text;
      parts.push(i === 0 ? `${text} [${e.id}]` : `See also “${e.title}”: ${firstSentence(text)} [${e.id}]`);
    });
  }
  const live = liveSentence(figures);
  if (live) parts.push(`${live} [live]`);
  return { ok: true, facts, prose: parts.join(' ') };
}
