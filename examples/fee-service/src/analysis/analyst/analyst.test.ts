import { describe, expect, it } from 'vitest';
import { answerAnalystQuestion } from './analyst';
import { planSteps } from './plan';
import { concludeReport } from './report';
import { type AnalystToolbox, runSteps, StepFailure } from './run';

const txid = 'ab'.repeat(32);
const blockHash = `00000000${'cd'.repeat(28)}`;

describe('planSteps', () => {
  it.each([
    ['Should I send now or wait?', ['decision']],
    [`Why is ${txid} not confirming?`, ['explain_transaction', 'next_block']],
    [`What happened in ${blockHash}?`, ['explain_block']],
    ['Tell me about block 910000 and its fees', ['explain_block', 'preview']],
    ['How much should I pay for an urgent payment?', ['decision', 'fee_advice']],
    ['Which estimator can I trust?', ['observatory']],
    ['Give me the full picture', ['landscape']],
    ['hello there', ['preview', 'decision']],
  ])('plans %j as %j', (question, steps) => {
    expect(planSteps({ question }).steps.map((s) => s.step)).toEqual(steps);
  });

  it('takes the urgency for fee advice from the question', () => {
    const plan = planSteps({ question: 'How much should I pay, no rush, cheapest please' });
    expect(plan.steps.find((s) => s.step === 'fee_advice')!.args).toEqual({ urgency: 'low' });
  });

  it('follows the requested steps and bounds the plan', () => {
    const plan = planSteps({
      question: `fees for ${txid}`,
      requested: ['observatory', 'preview'],
      maxSteps: 1,
    });
    expect(plan.steps.map((s) => s.step)).toEqual(['observatory']);
    expect(plan.dropped.map((s) => s.step)).toEqual(['preview']);
    expect(
      planSteps({ question: 'fees mempool send advice next block compare accuracy', maxSteps: 99 }).steps,
    ).toHaveLength(6);
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

  it('runs each step, reports unavailable ones and concludes from the most decisive', async () => {
    const reports = await runSteps({ steps: planSteps({ question: 'send now? landscape' }).steps, toolbox });
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
    expect(concludeReport(reports).kind).toBe('unavailable');
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
      steps: planSteps({ question: 'fees, send now?' }).steps,
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
    const steps = planSteps({ question: 'fees' }).steps;
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

  it('runs the rule plan without a model', async () => {
    const answer = await answerAnalystQuestion({ question: 'fees: send now?', toolbox });
    expect(answer).toMatchObject({
      planned_by: 'rules',
      provenance: { provider: 'deterministic', model: null, fallback: null },
    });
    expect(answer.steps.map((s) => s.step)).toEqual(['preview', 'decision']);
    expect(answer.verdict).toMatchObject({ kind: 'report', conclusion: 'send-wait-v1 says wait.' });
  });

  it('answers not found for a txid in the question that does not exist, running nothing else', async () => {
    const other = 'ef'.repeat(32);
    const answer = await answerAnalystQuestion({ question: `fees for ${other}?`, toolbox });
    expect(answer.verdict).toEqual({ kind: 'not_found', message: `transaction ${other} not found` });
    expect(answer.steps.map((s) => s.step)).toEqual(['explain_transaction']);
  });
});
