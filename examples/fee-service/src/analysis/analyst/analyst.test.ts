import { describe, expect, it } from 'vitest';
import { answerAnalystQuestion } from './analyst';
import { ANALYST_STEPS, planSteps } from './plan';
import { concludeReport } from './report';
import { type AnalystToolbox, runSteps, StepFailure } from './run';

const txid = 'ab'.repeat(32);
const blockHash = `00000000${'cd'.repeat(28)}`;

describe('planSteps', () => {
  it.each([
    [
      'Should I send now or wait?',
      ['send_timing'],
      ['decision', 'next_block', 'fee_advice', 'observatory', 'landscape'],
    ],
    [
      `Why is ${txid} not confirming?`,
      ['stuck_transaction', 'next_block'],
      ['explain_transaction', 'next_block', 'fee_advice', 'observatory', 'decision'],
    ],
    [`Explain ${txid}`, ['transaction'], ['explain_transaction', 'next_block']],
    [`RBF or CPFP for ${txid}?`, ['stuck_transaction'], ['explain_transaction', 'next_block', 'fee_advice']],
    [`What happened in ${blockHash}?`, ['block'], ['explain_block', 'landscape', 'next_block']],
    ['Tell me about block 910000 and its fees', ['block'], ['explain_block', 'landscape', 'next_block']],
    [
      'How much should I pay for an urgent payment?',
      ['what_to_pay'],
      ['fee_advice', 'next_block', 'observatory', 'landscape'],
    ],
    ['Which estimator can I trust?', ['estimators'], ['observatory', 'next_block', 'landscape']],
    ['Give me the full picture', ['overview'], ['landscape', 'decision', 'next_block', 'observatory']],
    ['hello there', ['overview'], ['landscape', 'decision', 'next_block', 'observatory']],
  ])('plans %j as the intents %j with the steps %j', (question, intents, steps) => {
    const plan = planSteps({ question });
    expect(plan.intents).toEqual(intents);
    expect(plan.steps.map((s) => s.step)).toEqual(steps);
  });

  it('takes the urgency and the amount for fee advice from the question', () => {
    const plan = planSteps({ question: 'How much should I pay to send 0.25 BTC, no rush, cheapest please' });
    expect(plan.steps.find((s) => s.step === 'fee_advice')!.args).toEqual({
      urgency: 'low',
      amount_btc: '0.25',
    });
    // A stuck transaction's advice is for the next block.
    const stuck = planSteps({ question: `${txid} is stuck` });
    expect(stuck.steps.find((s) => s.step === 'fee_advice')!.args).toEqual({ urgency: 'high' });
  });

  it('puts "what to pay" before "when to send" when the question asks how much', () => {
    expect(planSteps({ question: 'How much should I pay to send it now?' }).intents).toEqual([
      'what_to_pay',
      'send_timing',
    ]);
  });

  it('follows the requested steps and bounds the plan', () => {
    const plan = planSteps({
      question: `fees for ${txid}`,
      requested: ['observatory', 'preview'],
      maxSteps: 1,
    });
    expect(plan.steps.map((s) => s.step)).toEqual(['observatory']);
    expect(plan.dropped.map((s) => s.step)).toEqual(['preview']);
    const wide = planSteps({
      question: `fees for ${txid} in block 5`,
      requested: ANALYST_STEPS,
      maxSteps: 99,
    });
    expect(wide.steps.map((s) => s.step)).toEqual(ANALYST_STEPS.slice(0, 6));
    expect(wide.dropped.map((s) => s.step)).toEqual(['landscape', 'observatory']);
  });
});

describe('runSteps and concludeReport', () => {
  const toolbox: AnalystToolbox = {
    preview: async () => ({
      summary: 'Fastest 20 sat/vB, economy 5.',
      evidence: { fastest: 20, economy: 5 },
    }),
    decision: async () => ({ summary: 'send-wait-v1 says wait.', evidence: { decision: 'wait' } }),
    explain_transaction: async (args) => {
      throw new StepFailure('not_found', `transaction ${args.txid} not found`);
    },
    next_block: async () => {
      throw new StepFailure('unavailable', 'upstream down');
    },
  };

  it('runs each step, reports unavailable ones and concludes from the most decisive without findings', async () => {
    const reports = await runSteps({
      steps: planSteps({ question: 'send now?', requested: ['decision', 'landscape'] }).steps,
      toolbox,
    });
    expect(reports.map((r) => [r.step, r.status])).toEqual([
      ['decision', 'ok'],
      ['landscape', 'unavailable'],
    ]);
    const verdict = concludeReport(reports);
    expect(verdict).toMatchObject({ kind: 'report', conclusion: 'send-wait-v1 says wait.' });
    if (verdict.kind === 'report') expect(verdict.prose).toContain('Step 2, landscape: unavailable');
  });

  it('answers not found when the question’s own target does not exist', async () => {
    const reports = await runSteps({ steps: planSteps({ question: `explain ${txid}` }).steps, toolbox });
    expect(concludeReport(reports)).toEqual({ kind: 'not_found', message: `transaction ${txid} not found` });
  });

  it('answers unavailable when no step produced evidence', async () => {
    const reports = await runSteps({ steps: planSteps({ question: 'next block?' }).steps, toolbox });
    expect(reports.map((r) => r.status)).toEqual(['unavailable', 'unavailable', 'ok']);
    expect(concludeReport(reports.slice(0, 2)).kind).toBe('unavailable');
  });

  it('aborts a step that outlives the budget and starts none after it', async () => {
    let aborted = false;
    const slow: AnalystToolbox = {
      ...toolbox,
      preview: (_args, signal) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
    };
    let clock = 0;
    const reports = await runSteps({
      steps: planSteps({ question: 'fees, send now?', requested: ['preview', 'decision'] }).steps,
      toolbox: slow,
      budgetMs: 20,
      now: () => clock,
    });
    // The fake clock never moves while preview hangs; the real timer of 20 ms ends it.
    clock = 25;
    expect(aborted).toBe(true);
    expect(reports.map((r) => r.status)).toEqual(['timed_out', 'timed_out']);
  });

  it('shares results through the memo', async () => {
    let calls = 0;
    const counted: AnalystToolbox = {
      preview: async () => {
        calls += 1;
        return { summary: 's', evidence: {} };
      },
    };
    const memo = new Map();
    const steps = planSteps({ question: 'fees', requested: ['preview'] }).steps;
    await runSteps({ steps, toolbox: counted, memo });
    await runSteps({ steps, toolbox: counted, memo });
    expect(calls).toBe(1);
  });
});

describe('answerAnalystQuestion', () => {
  const toolbox: AnalystToolbox = {
    preview: async () => ({
      summary: 'Fastest 20 sat/vB, economy 5 sat/vB.',
      evidence: { fastest: 20, economy: 5 },
    }),
    decision: async () => ({
      summary: 'send-wait-v1 says wait.',
      evidence: { decision: 'wait', saving_sat_vb: 15 },
    }),
    explain_transaction: async (args) => {
      if (args.txid !== txid) throw new StepFailure('not_found', `transaction ${args.txid} not found`);
      return { summary: 'It pays 20 sat/vB.', evidence: { fee_rate: 20 } };
    },
  };

  it('runs the rule plan without a model, reporting the steps this deployment lacks', async () => {
    const answer = await answerAnalystQuestion({ question: 'fees: send now?', toolbox });
    expect(answer).toMatchObject({
      intents: ['send_timing'],
      planned_by: 'rules',
      provenance: { provider: 'deterministic', model: null, fallback: null },
    });
    expect(answer.steps.map((s) => [s.step, s.status])).toEqual([
      ['decision', 'ok'],
      ['next_block', 'unavailable'],
      ['fee_advice', 'unavailable'],
      ['observatory', 'unavailable'],
      ['landscape', 'unavailable'],
    ]);
    expect(answer.verdict).toMatchObject({
      kind: 'report',
      conclusion: 'send-wait-v1 says wait.',
      synthesis: null,
    });
  });

  it('answers not found for a txid in the question that does not exist, running nothing else', async () => {
    const other = 'ef'.repeat(32);
    const answer = await answerAnalystQuestion({ question: `fees for ${other}?`, toolbox });
    expect(answer.verdict).toEqual({ kind: 'not_found', message: `transaction ${other} not found` });
    expect(answer.steps.map((s) => s.step)).toEqual(['explain_transaction']);
  });
});
