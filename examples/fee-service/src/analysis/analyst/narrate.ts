/**
 * The analyst's model, when one is configured: it reads the facts the rule plan produced and the
 * conclusion combined from them, may call more steps as tools, and writes the narrative. Its prose
 * is used only when every number in it appears in the facts (docs/ai-resources.md#models).
 */
import {
  type LanguageModel,
  ModelFailure,
  type ModelTool,
  numbersOfFacts,
  type ProseProvenance,
  runToolLoop,
  ungroundedNumbers,
} from '../../capabilities/language-model';
import { ANALYST_STEPS, type AnalystIntent, STEP_DESCRIPTIONS, type StepName } from './plan';
import { type AnalystVerdict, concludeReport } from './report';
import { type AnalystToolbox, runStep, type StepReport } from './run';

/** The instructions of the analyst's model. */
export const ANALYST_SYSTEM_PROMPT = [
  'You are a Bitcoin fee analyst. The FACTS hold the results of the steps already run for the question and a conclusion combined from them.',
  'You may call more tools if the question needs them, then answer in at most 150 words of plain prose.',
  'Use only numbers that appear in the facts or tool results. Say which step each claim comes from. Keep the caveats.',
  'End with one sentence starting "Conclusion:" that says what to do.',
].join(' ');

const TOOL_PARAMETERS: Readonly<Record<StepName, Record<string, unknown>>> = {
  explain_transaction: {
    type: 'object',
    properties: { txid: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
    required: ['txid'],
  },
  explain_block: {
    type: 'object',
    properties: { hash_or_height: { type: 'string', description: 'block hash (64 hex) or height' } },
    required: ['hash_or_height'],
  },
  fee_advice: {
    type: 'object',
    properties: {
      urgency: { type: 'string', enum: ['low', 'medium', 'high'] },
      amount_btc: { type: 'string' },
    },
  },
  preview: { type: 'object', properties: {} },
  decision: { type: 'object', properties: {} },
  next_block: { type: 'object', properties: {} },
  landscape: { type: 'object', properties: {} },
  observatory: { type: 'object', properties: {} },
};

/** A step's report as the model reads it: no findings (the evidence holds them). */
const forModel = (r: StepReport) => ({
  step: r.step,
  status: r.status,
  summary: r.summary,
  evidence: r.evidence,
});

type Report = Extract<AnalystVerdict, { kind: 'report' }>;

/** The model's narrative with the steps it stands on, or why the deterministic report stands. */
export type Narration =
  | { ok: true; verdict: Report; steps: StepReport[]; addedSteps: boolean }
  | { ok: false; fallback: NonNullable<ProseProvenance['fallback']> };

/**
 * Lets the model narrate the rules' report: `steps` and `ruled` are what the rule plan produced;
 * the model may run up to `maxCalls` more steps before `deadline` (sharing `memo`). Never throws:
 * any failure, and prose stating numbers the facts do not hold, come back as the fallback reason.
 */
export async function narrateWithModel(options: {
  question: string;
  model: LanguageModel;
  toolbox: AnalystToolbox;
  steps: readonly StepReport[];
  ruled: Report;
  intents: readonly AnalystIntent[];
  maxCalls: number;
  deadline: number;
  now: () => number;
  memo: Map<string, StepReport>;
}): Promise<Narration> {
  const { steps, ruled, deadline, now, memo } = options;
  const tools: ModelTool[] = ANALYST_STEPS.filter((s) => options.toolbox[s]).map((name) => ({
    name,
    description: STEP_DESCRIPTIONS[name],
    parameters: TOOL_PARAMETERS[name],
  }));
  const added: StepReport[] = [];
  try {
    const facts = {
      steps: steps.map(forModel),
      conclusion: ruled.conclusion,
      figures: ruled.synthesis?.figures ?? [],
      caveats: ruled.synthesis?.caveats ?? [],
    };
    const loop = await runToolLoop({
      model: options.model,
      system: ANALYST_SYSTEM_PROMPT,
      user: [
        `QUESTION: ${options.question}`,
        `FACTS: ${JSON.stringify(facts)}`,
        `DRAFT (accurate; improve its wording, keep its numbers and caveats): ${ruled.prose}`,
      ].join('\n'),
      tools,
      maxCalls: options.maxCalls,
      signal: AbortSignal.timeout(Math.max(1, Math.ceil(deadline - now()))),
      execute: async (name, args) => {
        const stringArgs = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)]));
        const report = await runStep({
          planned: { step: name as StepName, args: stringArgs, why: 'chosen by the model' },
          toolbox: options.toolbox,
          deadline,
          now,
          memo,
        });
        // A step the rules already ran is answered from the memo and not reported twice.
        const again = steps.some(
          (s) => s.step === report.step && JSON.stringify(s.args) === JSON.stringify(report.args),
        );
        if (!again) added.push(report);
        return report.status === 'ok' ? report.evidence : { status: report.status, message: report.summary };
      },
    });
    // A target the model made up (not found, malformed) is its mistake, not the client's: the
    // step is reported failed and the report stands on the others.
    const all = [
      ...steps,
      ...added.map((s) =>
        s.status === 'not_found' || s.status === 'bad_input' ? { ...s, status: 'failed' as const } : s,
      ),
    ];
    const verdict = added.length > 0 ? concludeReport(all, { intents: options.intents }) : ruled;
    if (verdict.kind !== 'report') throw new ModelFailure('empty_response', 'the steps produced no evidence');
    const allowed = numbersOfFacts([
      all.map((s) => ({ evidence: s.evidence, summary: s.summary, args: s.args })),
      verdict.prose,
      verdict.synthesis,
    ]);
    const bad = ungroundedNumbers(loop.content, allowed);
    if (bad.length > 0) {
      return {
        ok: false,
        fallback: {
          reason: 'ungrounded_numbers',
          message: 'the model stated numbers that are not in the facts',
          ungrounded: bad,
        },
      };
    }
    return {
      ok: true,
      verdict: { ...verdict, prose: loop.content },
      steps: all,
      addedSteps: added.length > 0,
    };
  } catch (error) {
    const failure =
      error instanceof ModelFailure ? error : new ModelFailure('upstream_error', (error as Error).message);
    return { ok: false, fallback: { reason: failure.reason, message: failure.message } };
  }
}
