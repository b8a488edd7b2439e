import { formatInt, formatRate } from '../format';
import type { FeeMarket } from '../market';
import type { LiveFigureGroup } from './knowledge-base';
import type { KnowledgeIndex } from './retrieve';

/** A live figure the answer used, with where it came from. */
export interface LiveFigure {
  name: string;
  value: number;
  unit: 'sat/vB' | 'vB' | 'transactions' | 'blocks' | 'height';
}

export interface ChatFacts {
  question: string;
  entries: {
    id: string;
    title: string;
    score: number;
    matched: string[];
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
      `the mempool holds ${formatInt(get('mempool_transactions')!)} transactions, ${formatInt(vsize)} vB or ${formatInt(get('projected_blocks')!)} blocks' worth`,
    );
  }
  const tip = get('tip_height');
  if (tip !== undefined) parts.push(`the chain tip is block ${formatInt(tip)}`);
  return parts.length === 0 ? '' : `Right now ${parts.join('; ')}.`;
}

/**
 * Answers a question from the knowledge base and the live market: the best entries (cited by
 * id, with their public sources), then the live figures those entries call for. A question outside
 * the domain is refused with the reason.
 */
export function answerQuestion(options: {
  question: string;
  index: KnowledgeIndex;
  market: FeeMarket;
}): ChatOutcome {
  const retrieval = options.index.retrieve(options.question);
  if (!retrieval.inDomain) return { ok: false, reason: retrieval.reason };
  const groups = new Set(retrieval.results.flatMap((r) => r.entry.live));
  const figures = liveFigures(groups, options.market);
  const facts: ChatFacts = {
    question: options.question,
    entries: retrieval.results.map((r) => ({
      id: r.entry.id,
      title: r.entry.title,
      score: r.score,
      matched: r.matched,
      sources: r.entry.sources,
    })),
    live_figures: figures,
  };
  const [first, second] = retrieval.results;
  const parts = [`${first!.entry.text} [${first!.entry.id}]`];
  if (second)
    parts.push(`See also “${second.entry.title}”: ${second.entry.text.split('. ')[0]}. [${second.entry.id}]`);
  const live = liveSentence(figures);
  if (live) parts.push(`${live} [live]`);
  return { ok: true, facts, prose: parts.join(' ') };
}
