import {
  type LanguageModel,
  ModelFailure,
  type ModelTool,
  numbersOfFacts,
  type ProseProvenance,
  runToolLoop,
  ungroundedNumbers,
} from '../../capabilities/language-model';
import {
  ANALYST_STEPS,
  MAX_ANALYST_STEPS,
  type PlannedStep,
  planSteps,
  STEP_DESCRIPTIONS,
  type StepName,
} from './plan';
import { type AnalystVerdict, concludeReport } from './report';
import { ANALYST_TIME_BUDGET_MS, type AnalystToolbox, runStep, runSteps, type StepReport } from './run';

/** The instructions of the analyst's model. */
export const ANALYST_SYSTEM_PROMPT = [
  'You are a Bitcoin fee analyst. Call the tools you need to answer the question, then answer in at most 150 words of plain prose.',
  'Use only numbers that appear in the tool results. Say which tool each claim comes from. End with one sentence starting "Conclusion:".',
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

export interface AnalystAnswer {
  verdict: AnalystVerdict;
  question: string;
  planned_by: 'rules' | 'model';
  steps: StepReport[];
  dropped: { step: StepName; why: string }[];
  provenance: ProseProvenance;
}

const isExplainer = (s: PlannedStep) => s.step === 'explain_transaction' || s.step === 'explain_block';

/**
 * Answers an analyst question. The question's own targets (a txid or block it names) are explained
 * first: a target that does not exist ends the request as not found before anything else runs.
 * With a model, the model then plans by tool calls (bounded by `maxSteps` and the time budget) and
 * writes the report, which must state only numbers from the tool results; without one, or when the
 * model fails in any way, the rule planner runs and the deterministic report is returned, saying why.
 */
export async function answerAnalystQuestion(options: {
  question: string;
  toolbox: AnalystToolbox;
  model?: LanguageModel;
  requested?: readonly StepName[];
  maxSteps?: number;
  budgetMs?: number;
}): Promise<AnalystAnswer> {
  const maxSteps = Math.max(1, Math.min(options.maxSteps ?? MAX_ANALYST_STEPS, MAX_ANALYST_STEPS));
  const plan = planSteps({
    question: options.question,
    maxSteps,
    ...(options.requested ? { requested: options.requested } : {}),
  });
  const now = performance.now.bind(performance);
  const deadline = now() + (options.budgetMs ?? ANALYST_TIME_BUDGET_MS);
  const memo = new Map<string, StepReport>();
  const dropped = plan.dropped.map(({ step, why }) => ({ step, why }));

  const targets: StepReport[] = [];
  for (const planned of plan.steps.filter(isExplainer)) {
    targets.push(await runStep({ planned, toolbox: options.toolbox, deadline, now, memo }));
  }
  const targetVerdict = concludeReport(targets);
  if (targetVerdict.kind === 'not_found' || targetVerdict.kind === 'bad_input') {
    return {
      verdict: targetVerdict,
      question: options.question,
      planned_by: 'rules',
      steps: targets,
      dropped,
      provenance: { provider: 'deterministic', model: options.model?.name ?? null, fallback: null },
    };
  }

  const deterministic = async (fallback: ProseProvenance['fallback']): Promise<AnalystAnswer> => {
    const steps = await runSteps({
      steps: plan.steps,
      toolbox: options.toolbox,
      budgetMs: Math.max(0, deadline - now()),
      memo,
    });
    return {
      verdict: concludeReport(steps),
      question: options.question,
      planned_by: 'rules',
      steps,
      dropped,
      provenance: { provider: 'deterministic', model: options.model?.name ?? null, fallback },
    };
  };
  if (!options.model) return deterministic(null);

  const available = ANALYST_STEPS.filter((s) => options.toolbox[s]);
  const tools: ModelTool[] = available.map((name) => ({
    name,
    description: STEP_DESCRIPTIONS[name],
    parameters: TOOL_PARAMETERS[name],
  }));
  const modelSteps: StepReport[] = [...targets];
  try {
    const targetNote =
      targets.length > 0
        ? `\nALREADY EXPLAINED: ${JSON.stringify(targets.map((t) => ({ step: t.step, evidence: t.evidence })))}`
        : '';
    const loop = await runToolLoop({
      model: options.model,
      system: ANALYST_SYSTEM_PROMPT,
      user: `QUESTION: ${options.question}${targetNote}`,
      tools,
      maxCalls: Math.max(0, maxSteps - targets.length),
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
        modelSteps.push(report);
        return report.status === 'ok' ? report.evidence : { status: report.status, message: report.summary };
      },
    });
    // A target the model made up (not found, malformed) is its mistake, not the client's: the
    // step is reported failed and the report stands on the others.
    const verdict = concludeReport(
      modelSteps.map((s) =>
        !targets.includes(s) && (s.status === 'not_found' || s.status === 'bad_input')
          ? { ...s, status: 'failed' as const }
          : s,
      ),
    );
    if (verdict.kind !== 'report') {
      throw new ModelFailure('empty_response', 'the model’s steps produced no evidence');
    }
    const allowed = numbersOfFacts(
      modelSteps.map((s) => ({ evidence: s.evidence, summary: s.summary, args: s.args })),
    );
    const bad = ungroundedNumbers(loop.content, allowed);
    if (bad.length > 0) {
      const answer = await deterministic({
        reason: 'ungrounded_numbers',
        message: 'the model stated numbers that are not in the tool results',
        ungrounded: bad,
      });
      return answer;
    }
    return {
      verdict: { ...verdict, prose: loop.content },
      question: options.question,
      planned_by: 'model',
      steps: modelSteps,
      dropped: [],
      provenance: { provider: options.model.name, model: options.model.name, fallback: null },
    };
  } catch (error) {
    const failure =
      error instanceof ModelFailure ? error : new ModelFailure('upstream_error', (error as Error).message);
    return deterministic({ reason: failure.reason, message: failure.message });
  }
}
