import type { LanguageModel, ProseProvenance } from '../../capabilities/language-model';
import { narrateWithModel } from './narrate';
import { type AnalystIntent, MAX_ANALYST_STEPS, type PlannedStep, planSteps, type StepName } from './plan';
import { type AnalystVerdict, concludeReport } from './report';
import { ANALYST_TIME_BUDGET_MS, type AnalystToolbox, runStep, runSteps, type StepReport } from './run';

export interface AnalystAnswer {
  verdict: AnalystVerdict;
  question: string;
  /** What the question is after (the plan's intents), the first answered by the conclusion. */
  intents: AnalystIntent[];
  /** `rules` planned every step; `rules_and_model`: the model added steps to the rules' plan. */
  planned_by: 'rules' | 'rules_and_model';
  steps: StepReport[];
  dropped: { step: StepName; why: string }[];
  provenance: ProseProvenance;
}

const isExplainer = (s: PlannedStep) => s.step === 'explain_transaction' || s.step === 'explain_block';

/**
 * Answers an analyst question. The question's own targets (a txid or block it names) are explained
 * first: a target that does not exist ends the request as not found before anything else runs.
 * Then the rule plan's steps run and their findings are combined into the conclusion. With a
 * model, the model reads those facts, may call more steps (within `maxSteps` and the time budget)
 * and writes the narrative, which must state only numbers from the facts; without one, or when the
 * model fails in any way, the deterministic report is returned, saying why.
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
  const context = { intents: plan.intents };
  const answer = (
    verdict: AnalystVerdict,
    steps: StepReport[],
    provenance: ProseProvenance,
    plannedBy: AnalystAnswer['planned_by'] = 'rules',
  ): AnalystAnswer => ({
    verdict,
    question: options.question,
    intents: plan.intents,
    planned_by: plannedBy,
    steps,
    dropped,
    provenance,
  });
  const deterministic = (fallback: ProseProvenance['fallback']): ProseProvenance => ({
    provider: 'deterministic',
    model: options.model?.name ?? null,
    fallback,
  });

  const targets: StepReport[] = [];
  for (const planned of plan.steps.filter(isExplainer)) {
    targets.push(await runStep({ planned, toolbox: options.toolbox, deadline, now, memo }));
  }
  const targetVerdict = concludeReport(targets, context);
  if (targetVerdict.kind === 'not_found' || targetVerdict.kind === 'bad_input') {
    return answer(targetVerdict, targets, deterministic(null));
  }

  const steps = await runSteps({
    steps: plan.steps,
    toolbox: options.toolbox,
    budgetMs: Math.max(0, deadline - now()),
    memo,
  });
  const ruled = concludeReport(steps, context);
  if (!options.model || ruled.kind !== 'report') return answer(ruled, steps, deterministic(null));

  const narration = await narrateWithModel({
    question: options.question,
    model: options.model,
    toolbox: options.toolbox,
    steps,
    ruled,
    intents: plan.intents,
    maxCalls: Math.max(0, maxSteps - steps.length),
    deadline,
    now,
    memo,
  });
  if (!narration.ok) return answer(ruled, steps, deterministic(narration.fallback));
  return answer(
    narration.verdict,
    narration.steps,
    { provider: options.model.name, model: options.model.name, fallback: null },
    narration.addedSteps ? 'rules_and_model' : 'rules',
  );
}
