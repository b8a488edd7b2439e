/**
 * The analyst's conclusion: what to do, with the numbers and the caveats, combined from every
 * step that produced evidence. The question's first intent chooses the order of the sentences;
 * each sentence names the steps it drew on, so the conclusion says what it combined and what it
 * lacked (docs/ai-resources.md#the-conclusion).
 */
import { formatInt, formatRate } from '../format';
import type { Findings } from './findings';
import type { AnalystIntent, StepName } from './plan';
import type { StepReport } from './run';
import {
  blockVerdict,
  type Figure,
  type Sentence,
  timing,
  transactionVerdict,
  trend,
  trust,
  whatToPay,
} from './sentences';

export type AnalystAction = 'send' | 'wait' | 'bump' | 'nothing_to_do' | 'none';

export interface AnalystSynthesis {
  /** The intent the conclusion answers (the question's first). */
  intent: AnalystIntent;
  action: AnalystAction;
  conclusion: string;
  /** Every number the conclusion states, with the step it comes from. */
  figures: Figure[];
  caveats: string[];
  /** The steps whose findings the conclusion combines. */
  combined: StepName[];
}

/** Every finding of the steps that produced evidence, later steps filling what earlier ones lacked. */
export function gatherFindings(reports: readonly StepReport[]): Findings {
  const out: Findings = {};
  for (const r of reports) if (r.status === 'ok' && r.findings) Object.assign(out, r.findings, { ...out });
  return out;
}

function nextBlockHeadline(f: Findings): Sentence | undefined {
  const n = f.next_block;
  if (!n) return undefined;
  const chance = Math.round(n.chance_within_10_minutes * 1000) / 10;
  return {
    text: `The next block (height ${formatInt(n.height)}) takes ${formatRate(n.entry_rate_sat_vb)} now (${n.block_full ? 'it is full: its lowest included rate' : 'it has room: the relay minimum'}); its median rate is ${formatRate(n.median_rate_sat_vb)}, and it comes within 10 minutes with a ${chance}% chance.`,
    figures: [
      { name: 'next_block_entry_rate', value: n.entry_rate_sat_vb, unit: 'sat/vB', from: 'next_block' },
      { name: 'next_block_median_rate', value: n.median_rate_sat_vb, unit: 'sat/vB', from: 'next_block' },
      { name: 'chance_within_10_minutes', value: chance, unit: '%', from: 'next_block' },
    ],
    used: ['next_block'],
  };
}

function decisionOf(f: Findings) {
  return f.decision ?? f.landscape?.send_wait;
}

function timingFrom(f: Findings): Sentence | undefined {
  const d = decisionOf(f);
  if (!d) return undefined;
  const s = timing(d);
  return f.decision
    ? s
    : { ...s, used: ['landscape'], figures: s.figures.map((x) => ({ ...x, from: 'landscape' as const })) };
}

/** The sentences each intent's conclusion combines, in order. */
function sentencesFor(intent: AnalystIntent, f: Findings) {
  const d = decisionOf(f);
  const action: AnalystAction = d?.decision ?? f.advice?.decision ?? 'none';
  const pay = () => whatToPay(f.next_block, f.advice, f.landscape);
  const trusted = () => trust(f.estimators, f.next_block);
  switch (intent) {
    case 'stuck_transaction':
    case 'transaction': {
      if (!f.transaction)
        return { action: 'none' as const, sentences: [pay(), trusted(), trend(f.landscape, 'other')] };
      const verdict = transactionVerdict(f.transaction, f.next_block, f.advice);
      return {
        action: verdict.action,
        sentences: [verdict.sentence, pay(), trusted(), trend(f.landscape, 'other')],
      };
    }
    case 'block':
      return {
        action: 'none' as const,
        sentences: [f.block ? blockVerdict(f.block, f.next_block, f.landscape) : nextBlockHeadline(f)],
      };
    case 'send_timing':
      return {
        action,
        sentences: [timingFrom(f), pay(), trusted(), trend(f.landscape, action === 'wait' ? 'wait' : 'send')],
      };
    case 'what_to_pay':
      return {
        action,
        sentences: [pay(), timingFrom(f), trusted(), trend(f.landscape, action === 'wait' ? 'wait' : 'send')],
      };
    case 'next_block':
      return { action, sentences: [nextBlockHeadline(f), trusted(), timingFrom(f)] };
    case 'estimators':
      return {
        action: 'none' as const,
        sentences: [trusted(), nextBlockHeadline(f), trend(f.landscape, 'other')],
      };
    case 'overview':
      return {
        action,
        sentences: [trend(f.landscape, action === 'wait' ? 'wait' : 'send'), timingFrom(f), pay(), trusted()],
      };
  }
}

/** Caveats that hold for every answer, then what the evidence lacked. */
function caveatsOf(f: Findings, reports: readonly StepReport[]): string[] {
  const caveats = [
    'Rates are estimates and projections from the current mempool, not guarantees: fees can rise while a transaction waits, and miners choose what they include.',
  ];
  if (f.next_block) {
    const chance = Math.round(f.next_block.chance_within_10_minutes * 1000) / 10;
    caveats.push(
      `A block comes within 10 minutes only ${chance}% of the time; one can take an hour or more.`,
    );
  }
  for (const r of reports) {
    if (r.status !== 'ok')
      caveats.push(
        `The ${r.step.replace(/_/g, ' ')} step was ${r.status.replace(/_/g, ' ')} (${r.summary}), so the conclusion does without it.`,
      );
  }
  return caveats;
}

/**
 * Combines the steps' findings into the conclusion for the question's intents. Undefined when no
 * step's findings support a sentence (the report then concludes from the steps' summaries).
 */
export function synthesize(options: {
  intents: readonly AnalystIntent[];
  reports: readonly StepReport[];
}): AnalystSynthesis | undefined {
  const f = gatherFindings(options.reports);
  const intent = options.intents[0] ?? 'overview';
  const { action, sentences } = sentencesFor(intent, f);
  const present = sentences.filter((s): s is Sentence => s !== undefined);
  if (present.length === 0) return undefined;
  const combined = [...new Set(present.flatMap((s) => s.used))];
  const caveats = caveatsOf(f, options.reports);
  return {
    intent,
    action,
    conclusion: present.map((s) => s.text).join(' '),
    figures: present
      .flatMap((s) => s.figures)
      .filter((x, i, all) => all.findIndex((y) => y.name === x.name && y.from === x.from) === i),
    caveats,
    combined,
  };
}
