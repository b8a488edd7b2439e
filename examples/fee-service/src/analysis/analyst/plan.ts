/**
 * The analyst's planner: which steps a question needs, chosen by documented rules from its words,
 * or the steps the client names. Steps are the service's own resources, run in process.
 */

export const ANALYST_STEPS = [
  'explain_transaction',
  'explain_block',
  'preview',
  'decision',
  'fee_advice',
  'next_block',
  'landscape',
  'observatory',
] as const;
export type StepName = (typeof ANALYST_STEPS)[number];

/** What each step does, for the plan, the documentation and the model's tool list. */
export const STEP_DESCRIPTIONS: Readonly<Record<StepName, string>> = {
  explain_transaction:
    'Explain one transaction by txid: fee, size, rate against the market, RBF, heuristics.',
  explain_block:
    'Explain one block by hash or height: pool, fullness, fees against subsidy, fee-rate percentiles.',
  preview: 'Current fee tiers, mempool size and the savings of waiting (the free preview).',
  decision: 'The send-wait-v1 send-or-wait decision from the current snapshot.',
  fee_advice: 'Fee advice for an urgency (low, medium, high) and optional amount.',
  next_block: 'The projected next block: its fee floor, fee percentiles and top transactions.',
  landscape: 'Every source’s tiers side by side, the fee histogram and the fee environment.',
  observatory: 'How accurate each fee estimator has been, per horizon (the observatory scoreboard).',
};

export interface PlannedStep {
  step: StepName;
  args: Record<string, string>;
  /** The rule that chose it. */
  why: string;
}

/** Most steps one analyst request runs; the `max_steps` parameter may lower it. */
export const MAX_ANALYST_STEPS = 6;

const TXID_OR_HASH = /\b[0-9a-f]{64}\b/i;
const BLOCK_HEIGHT = /\bblock\s+(?:#|height\s+|number\s+)?(\d{1,7})\b/i;

interface Rule {
  step: StepName;
  pattern: RegExp;
  why: string;
}

/** Keyword rules, in the order their steps run. */
export const PLAN_RULES: readonly Rule[] = [
  {
    step: 'preview',
    pattern: /\b(fees?|rates?|mempool|sat\/vb|congest\w*|backlog)\b/i,
    why: 'the question is about fees or the mempool',
  },
  {
    step: 'decision',
    pattern: /\b(send|wait|now|should i|timing|when)\b/i,
    why: 'the question asks whether or when to send',
  },
  {
    step: 'fee_advice',
    pattern: /\b(urgent\w*|cheap\w*|cost\w*|how much|advi[cs]e|recommend\w*|pay|consolidat\w*|amount)\b/i,
    why: 'the question asks what to pay',
  },
  {
    step: 'next_block',
    pattern: /\b(next block|mined|miners?|mining|template|get in|confirm\w*)\b/i,
    why: 'the question is about the next block or confirmation',
  },
  {
    step: 'landscape',
    pattern: /\b(landscape|overview|compare|sources|everything|full picture|environment)\b/i,
    why: 'the question asks for the whole picture',
  },
  {
    step: 'observatory',
    pattern: /\b(accura\w*|trust\w*|reliab\w*|estimators?|scoreboard|observatory|history|historical)\b/i,
    why: 'the question is about how accurate estimates are',
  },
];

/** The urgency a question states, if any (for the fee-advice step). */
function urgencyIn(question: string): string | undefined {
  if (/\b(urgent\w*|asap|immediately|right away|next block)\b/i.test(question)) return 'high';
  if (/\b(no rush|not urgent|whenever|cheapest|consolidat\w*)\b/i.test(question)) return 'low';
  return undefined;
}

/**
 * Plans the steps for a question: an explainer for a txid, block hash or "block N" it mentions,
 * then every step whose rule matches, in {@link PLAN_RULES} order; the preview and the decision
 * when nothing matches. `requested` replaces the rules. At most `maxSteps` are kept; the rest are
 * returned as `dropped`.
 */
export function planSteps(options: {
  question: string;
  requested?: readonly StepName[];
  maxSteps?: number;
}): { steps: PlannedStep[]; dropped: PlannedStep[] } {
  const { question } = options;
  const planned: PlannedStep[] = [];
  const add = (step: PlannedStep) => {
    if (!planned.some((p) => p.step === step.step)) planned.push(step);
  };
  const target = TXID_OR_HASH.exec(question)?.[0].toLowerCase();
  const height = BLOCK_HEIGHT.exec(question)?.[1];
  if (target?.startsWith('00000000')) {
    add({ step: 'explain_block', args: { hash_or_height: target }, why: 'the question names a block hash' });
  } else if (target) {
    add({ step: 'explain_transaction', args: { txid: target }, why: 'the question names a txid' });
  }
  if (height)
    add({
      step: 'explain_block',
      args: { hash_or_height: height },
      why: `the question names block ${height}`,
    });

  const adviceArgs = (): Record<string, string> => {
    const urgency = urgencyIn(question);
    return urgency ? { urgency } : {};
  };
  const requested = options.requested ?? [];
  if (requested.length > 0) {
    // The client's list replaces the rules; an explainer runs only if listed and given a target.
    const explainers = planned.filter((p) => requested.includes(p.step));
    planned.length = 0;
    for (const step of requested) {
      const explainer = explainers.find((p) => p.step === step);
      if (explainer) add(explainer);
      else if (step !== 'explain_transaction' && step !== 'explain_block') {
        add({ step, args: step === 'fee_advice' ? adviceArgs() : {}, why: 'requested by the client' });
      }
    }
  } else {
    for (const rule of PLAN_RULES) {
      if (rule.pattern.test(question))
        add({ step: rule.step, args: rule.step === 'fee_advice' ? adviceArgs() : {}, why: rule.why });
    }
    if (planned.length === 0) {
      add({ step: 'preview', args: {}, why: 'no rule matched: the current fee picture' });
      add({ step: 'decision', args: {}, why: 'no rule matched: whether to send now' });
    }
  }
  const limit = Math.max(1, Math.min(options.maxSteps ?? MAX_ANALYST_STEPS, MAX_ANALYST_STEPS));
  return { steps: planned.slice(0, limit), dropped: planned.slice(limit) };
}
