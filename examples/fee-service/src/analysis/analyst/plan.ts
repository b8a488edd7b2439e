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

/** What a question is after; it picks the steps and the shape of the conclusion. */
export const ANALYST_INTENTS = [
  'stuck_transaction',
  'transaction',
  'block',
  'send_timing',
  'what_to_pay',
  'next_block',
  'estimators',
  'overview',
] as const;
export type AnalystIntent = (typeof ANALYST_INTENTS)[number];

interface IntentRule {
  intent: AnalystIntent;
  pattern: RegExp;
  /** The steps whose results together answer it, in the order they run. */
  steps: readonly StepName[];
  why: string;
}

const STUCK =
  /\b(?:stuck|pending|waiting|wait\w*|unconfirmed|not\s+confirm\w*|confirm\w*|slow|bump\w*|speed\s+up|accelerat\w*|rbf|cpfp|replace\w*|why)\b/i;

/**
 * Keyword rules, in the order their steps run. Each names every step its answer combines: "should
 * I send now" needs the decision, the next block's entry rate, what to pay, which estimator to
 * trust and where fees are heading, not the decision alone.
 */
export const PLAN_RULES: readonly IntentRule[] = [
  {
    intent: 'what_to_pay',
    pattern: /\b(?:urgent\w*|cheap\w*|cost\w*|how\s+much|advi[cs]e|recommend\w*|pay|consolidat\w*|amount)\b/i,
    steps: ['fee_advice', 'next_block', 'observatory', 'landscape'],
    why: 'the question asks what to pay',
  },
  {
    intent: 'send_timing',
    pattern: /\b(?:send|wait|now|timing|when|good\s+time|right\s+time)\b/i,
    steps: ['decision', 'next_block', 'fee_advice', 'observatory', 'landscape'],
    why: 'the question asks whether or when to send',
  },
  {
    intent: 'next_block',
    pattern: /\b(?:next\s+block|mined|miners?|mining|template|get\s+in|confirm\w*)\b/i,
    steps: ['next_block', 'observatory', 'decision'],
    why: 'the question is about the next block or confirmation',
  },
  {
    intent: 'estimators',
    pattern: /\b(?:accura\w*|trust\w*|reliab\w*|estimators?|scoreboard|observatory|history|historical)\b/i,
    steps: ['observatory', 'next_block', 'landscape'],
    why: 'the question is about how accurate estimates are',
  },
  {
    intent: 'overview',
    pattern: /\b(?:landscape|overview|compare|sources|everything|full\s+picture|environment)\b/i,
    steps: ['landscape', 'decision', 'next_block', 'observatory'],
    why: 'the question asks for the whole picture',
  },
];

/** Words of a general question about fees, answered by the overview when no other rule matched. */
const GENERAL = /\b(?:fees?|rates?|mempool|congest\w*|backlog|sat\/vb)\b/i;

/** The urgency a question states, if any (for the fee-advice step). */
function urgencyIn(question: string): string | undefined {
  if (/\b(urgent\w*|asap|immediately|right away|next block)\b/i.test(question)) return 'high';
  if (/\b(no rush|not urgent|whenever|cheapest|consolidat\w*)\b/i.test(question)) return 'low';
  return undefined;
}

/** The amount a question sends, in BTC, if it states one (for the fee-advice step). */
function amountIn(question: string): string | undefined {
  return /\b(\d+(?:\.\d{1,8})?)\s*(?:btc|bitcoins?)\b(?!\s*\/)/i.exec(question)?.[1];
}

export interface AnalystPlan {
  /** What the question is after, most specific first (`overview` when nothing matched). */
  intents: AnalystIntent[];
  steps: PlannedStep[];
  dropped: PlannedStep[];
}

/**
 * Plans the steps for a question: for a txid, block hash or "block N" it mentions, its explainer
 * and the steps that put it in today's market; then, for every intent whose rule matches (in
 * {@link PLAN_RULES} order), the steps that together answer it; the overview's when nothing
 * matches. `requested` replaces the rules. At most `maxSteps` are kept; the rest are returned as
 * `dropped`.
 */
export function planSteps(options: {
  question: string;
  requested?: readonly StepName[];
  maxSteps?: number;
}): AnalystPlan {
  const { question } = options;
  const planned: PlannedStep[] = [];
  const intents: AnalystIntent[] = [];
  const adviceArgs = (urgency = urgencyIn(question)): Record<string, string> => {
    const amount = amountIn(question);
    return { ...(urgency ? { urgency } : {}), ...(amount ? { amount_btc: amount } : {}) };
  };
  const add = (step: PlannedStep) => {
    if (!planned.some((p) => p.step === step.step)) planned.push(step);
  };
  const addSteps = (steps: readonly StepName[], why: string, urgency?: string) => {
    for (const step of steps) add({ step, args: step === 'fee_advice' ? adviceArgs(urgency) : {}, why });
  };
  const target = TXID_OR_HASH.exec(question)?.[0].toLowerCase();
  const height = BLOCK_HEIGHT.exec(question)?.[1];
  const explainers: PlannedStep[] = [];
  if (target?.startsWith('00000000')) {
    explainers.push({
      step: 'explain_block',
      args: { hash_or_height: target },
      why: 'the question names a block hash',
    });
  } else if (target) {
    explainers.push({
      step: 'explain_transaction',
      args: { txid: target },
      why: 'the question names a txid',
    });
  }
  if (height && !explainers.some((e) => e.step === 'explain_block'))
    explainers.push({
      step: 'explain_block',
      args: { hash_or_height: height },
      why: `the question names block ${height}`,
    });

  const requested = options.requested ?? [];
  if (requested.length > 0) {
    // The client's list replaces the rules; an explainer runs only if listed and given a target.
    for (const step of requested) {
      const explainer = explainers.find((p) => p.step === step);
      if (explainer) add(explainer);
      else if (step !== 'explain_transaction' && step !== 'explain_block') {
        add({ step, args: step === 'fee_advice' ? adviceArgs() : {}, why: 'requested by the client' });
      }
    }
    intents.push(...requestedIntents(explainers, requested, question));
  } else {
    for (const explainer of explainers) {
      add(explainer);
      if (explainer.step === 'explain_transaction') {
        const stuck = STUCK.test(question);
        intents.push(stuck ? 'stuck_transaction' : 'transaction');
        addSteps(
          stuck ? ['next_block', 'fee_advice'] : ['next_block'],
          'the transaction is compared with the next block',
          'high',
        );
      } else {
        intents.push('block');
        addSteps(['landscape', 'next_block'], 'the block is compared with recent blocks and the market now');
      }
    }
    for (const rule of PLAN_RULES) {
      if (!rule.pattern.test(question)) continue;
      intents.push(rule.intent);
      addSteps(rule.steps, rule.why);
    }
    if (intents.length === 0) {
      intents.push('overview');
      addSteps(
        PLAN_RULES.find((r) => r.intent === 'overview')!.steps,
        GENERAL.test(question)
          ? 'the question is about fees or the mempool in general'
          : 'no rule matched: the whole picture',
      );
    }
  }
  const limit = Math.max(1, Math.min(options.maxSteps ?? MAX_ANALYST_STEPS, MAX_ANALYST_STEPS));
  return { intents, steps: planned.slice(0, limit), dropped: planned.slice(limit) };
}

/** The intents of a client's own step list: the question's, when its words name one, else the overview. */
function requestedIntents(
  explainers: readonly PlannedStep[],
  requested: readonly StepName[],
  question: string,
): AnalystIntent[] {
  const intents: AnalystIntent[] = [];
  if (explainers.some((e) => e.step === 'explain_transaction' && requested.includes('explain_transaction')))
    intents.push(STUCK.test(question) ? 'stuck_transaction' : 'transaction');
  if (explainers.some((e) => e.step === 'explain_block' && requested.includes('explain_block')))
    intents.push('block');
  for (const rule of PLAN_RULES)
    if (rule.pattern.test(question) && !intents.includes(rule.intent)) intents.push(rule.intent);
  return intents.length > 0 ? intents : ['overview'];
}
