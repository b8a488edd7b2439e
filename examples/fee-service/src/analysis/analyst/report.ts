import { type AnalystSynthesis, synthesize } from './conclude';
import type { AnalystIntent, StepName } from './plan';
import type { StepReport } from './run';

/** Steps whose summary best answers the question, most decisive first. */
const CONCLUDING_ORDER: readonly StepName[] = [
  'fee_advice',
  'explain_transaction',
  'decision',
  'explain_block',
  'next_block',
  'observatory',
  'landscape',
  'preview',
];

export type AnalystVerdict =
  | { kind: 'report'; conclusion: string; prose: string; synthesis: AnalystSynthesis | null }
  /** The question's own target (a txid or block) does not exist: 404, never settled. */
  | { kind: 'not_found'; message: string }
  /** The target is malformed: 400 (the route's validation normally catches this before payment). */
  | { kind: 'bad_input'; message: string }
  /** No step produced evidence: 503, never settled. */
  | { kind: 'unavailable'; message: string };

/**
 * Turns step reports into the analyst's answer: a 404 when an explainer's target does not exist,
 * a 503 when no step produced evidence, else the conclusion and the prose (every step's summary in
 * order, then the conclusion and its caveats). The conclusion combines the steps' findings for the
 * question's intent ({@link synthesize}); steps that give no findings are concluded by the most
 * decisive one's summary.
 */
export function concludeReport(
  reports: readonly StepReport[],
  context: { intents?: readonly AnalystIntent[] } = {},
): AnalystVerdict {
  const missing = reports.find((r) => r.status === 'not_found');
  if (missing) return { kind: 'not_found', message: missing.summary };
  const bad = reports.find((r) => r.status === 'bad_input');
  if (bad) return { kind: 'bad_input', message: bad.summary };
  const ok = reports.filter((r) => r.status === 'ok');
  if (ok.length === 0) {
    return { kind: 'unavailable', message: 'no analysis step could run: the upstream data is unavailable' };
  }
  const decisive = CONCLUDING_ORDER.map((step) => ok.find((r) => r.step === step)).find(Boolean)!;
  const lines = reports.map(
    (r, i) =>
      `Step ${i + 1}, ${r.step.replace(/_/g, ' ')}: ${r.status === 'ok' ? r.summary : `${r.status.replace(/_/g, ' ')} (${r.summary})`}`,
  );
  const synthesis = synthesize({ intents: context.intents ?? [], reports }) ?? null;
  const conclusion = synthesis?.conclusion ?? decisive.summary;
  const caveats = synthesis ? ` Caveats: ${synthesis.caveats.join(' ')}` : '';
  return {
    kind: 'report',
    conclusion,
    prose: `${lines.join(' ')} Conclusion: ${conclusion}${caveats}`,
    synthesis,
  };
}
