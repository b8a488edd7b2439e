import { describe, expect, it } from 'vitest';
import type { Findings } from './findings';
import type { AnalystIntent, StepName } from './plan';
import { concludeReport } from './report';
import type { StepReport } from './run';

/** A step that ran, with the findings its resource's answer gave. */
const ran = (step: StepName, findings: Findings, summary = `${step} summary`): StepReport => ({
  step,
  args: {},
  why: 'test',
  status: 'ok',
  summary,
  evidence: {},
  findings,
  duration_ms: 1,
});
const down = (step: StepName): StepReport => ({
  step,
  args: {},
  why: 'test',
  status: 'unavailable',
  summary: `${step}: the upstream is unavailable (503)`,
  evidence: null,
  duration_ms: 0,
});

const calmNextBlock: Findings = {
  next_block: {
    height: 910_011,
    entry_rate_sat_vb: 1,
    entry_rule: 'the block has room (400000 vB): the minimum relay rate',
    median_rate_sat_vb: 2.5,
    block_full: false,
    chance_within_10_minutes: 0.6321,
    estimators: [
      { source: 'mempool.space', fastest_sat_vb: 2, gets_in: true, overpay_at_140_vbytes_sat: 140 },
      { source: 'esplora', fastest_sat_vb: 1, gets_in: true, overpay_at_140_vbytes_sat: 0 },
    ],
  },
};
const advice = (over: Partial<NonNullable<Findings['advice']>> = {}): Findings => ({
  advice: {
    urgency: 'medium',
    horizon_blocks: 6,
    tier: 'hour',
    rate_sat_vb: 1,
    vsize: 141,
    fee_sat: 141,
    next_block_fee_sat: 282,
    decision: 'send',
    by_deferring_sat: null,
    confidence: 'high',
    fastest_sat_vb: 2,
    minimum_sat_vb: 1,
    fee_share_percent: null,
    ...over,
  },
});
const scoreboard: Findings = {
  estimators: {
    window_hours: 168,
    best: [
      { target: 1, source: 'mempool.space', hit_rate: 0.9, n: 120, median_overpayment_sats_140: 140 },
      { target: 3, source: 'core-economical', hit_rate: 0.8, n: 110, median_overpayment_sats_140: 70 },
      { target: 6, source: 'esplora', hit_rate: 0.95, n: 100, median_overpayment_sats_140: 0 },
    ],
    empty_reason: null,
  },
};
const sendDecision = {
  decision: 'send' as const,
  fastest_sat_vb: 2,
  economy_sat_vb: 1,
  reason_codes: ['limited_wait_savings'],
  savings_sat_vb: 1,
  savings_percent: 50,
  savings_at_140_vbytes_sat: 140,
};
const landscape = (over: Partial<NonNullable<Findings['landscape']>> = {}): Findings => ({
  landscape: {
    environment: 'quiet',
    trend_direction: 'falling',
    trend_change_percent: -12.5,
    fastest_low_sat_vb: 1,
    fastest_high_sat_vb: 2,
    sources_quoting: 3,
    economy_sat_vb: 1,
    projected_block_floors_sat_vb: [1],
    send_wait: sendDecision,
    ...over,
  },
});

const conclude = (intents: AnalystIntent[], reports: StepReport[]) => {
  const verdict = concludeReport(reports, { intents });
  if (verdict.kind !== 'report') throw new Error(`no report: ${verdict.kind}`);
  return verdict;
};

describe('the analyst conclusion', () => {
  it('answers "should I send now" by combining the decision, the next block, the advice, the scoreboard and the trend', () => {
    const reports = [
      ran('decision', { decision: sendDecision }, 'send-wait-v1 says send.'),
      ran('next_block', calmNextBlock),
      ran('fee_advice', advice()),
      ran('observatory', scoreboard),
      ran('landscape', landscape()),
    ];
    const verdict = conclude(['send_timing'], reports);
    const { conclusion, synthesis } = verdict;
    expect(synthesis).toMatchObject({
      intent: 'send_timing',
      action: 'send',
      combined: ['decision', 'next_block', 'fee_advice', 'observatory', 'landscape'],
    });
    // The decision, with its figures and thresholds…
    expect(conclusion).toContain(
      'Send now: waiting for the economy tier (1 sat/vB, 141 sats for 141 vB) would save only 1 sat/vB (50% of the fastest rate, 140 sats on 140 vB)',
    );
    // …the next block's entry rate priced for the advised size, and the advised tier…
    expect(conclusion).toContain(
      'The next block (height 910,011) takes 1 sat/vB now, 141 sats for 141 vB (it has room: the relay minimum)',
    );
    expect(conclusion).toContain('the hour tier quotes 1 sat/vB, 141 sats for 141 vB');
    // …which estimator to trust per horizon, as the scoreboard ranks them, and what it quotes now…
    expect(conclusion).toContain(
      'for 1 block mempool.space (90% of 120 estimates hit, median overpayment 140 sats on 140 vB)',
    );
    expect(conclusion).toContain(
      'for 6 blocks esplora (95% of 100 estimates hit, median overpayment 0 sats on 140 vB)',
    );
    expect(conclusion).not.toContain('core-economical');
    expect(conclusion).toContain(
      'Its next-block quote now, 2 sat/vB, gets in but pays 140 sats more than the entry rate',
    );
    // …and where fees are heading, read against the action.
    expect(conclusion).toContain('falling (-12.5%)');
    expect(conclusion).toContain('a few blocks may bring lower rates');
    expect(synthesis!.caveats).toContain(
      'A block comes within 10 minutes only 63.2% of the time; one can take an hour or more.',
    );
    // Not one step's summary repeated.
    for (const r of reports) expect(conclusion).not.toBe(r.summary);
    expect(verdict.prose).toMatch(
      /^Step 1, decision: send-wait-v1 says send\. .* Conclusion: Send now: .* Caveats: Rates are estimates/,
    );
  });

  it('warns that waiting may cost more when it advises waiting while rates rise', () => {
    const wait = {
      ...sendDecision,
      decision: 'wait' as const,
      fastest_sat_vb: 13,
      economy_sat_vb: 2,
      reason_codes: ['meaningful_fee_curve_savings'],
      savings_sat_vb: 11,
      savings_percent: 84.6,
      savings_at_140_vbytes_sat: 1540,
    };
    const { conclusion, synthesis } = conclude(
      ['send_timing'],
      [
        ran('decision', { decision: wait }),
        ran(
          'landscape',
          landscape({ trend_direction: 'rising', trend_change_percent: 30.2, send_wait: wait }),
        ),
      ],
    );
    expect(synthesis!.action).toBe('wait');
    expect(conclusion).toContain(
      'Wait if the payment can take hours: the economy tier (2 sat/vB, 282 sats for 141 vB) saves 11 sat/vB (84.6% of the fastest rate, 1,540 sats on 140 vB)',
    );
    expect(conclusion).toContain('rising (+30.2%)');
    expect(conclusion).toContain('waiting may cost more than it saves');
  });

  it('checks the advised tier against the block the mempool projects at its horizon', () => {
    const { conclusion, synthesis } = conclude(
      ['what_to_pay'],
      [
        ran('fee_advice', advice({ rate_sat_vb: 5, fee_sat: 705 })),
        ran('landscape', landscape({ projected_block_floors_sat_vb: [20, 18, 16, 14, 12, 10, 8, 5] })),
      ],
    );
    expect(conclusion).toContain('the hour tier quotes 5 sat/vB, 705 sats for 141 vB');
    // Block 6 of the projection starts at 10 sat/vB: ceil(10 × 141) = 1,410 sats.
    expect(conclusion).toContain(
      "but the mempool as projected now puts block 6's lowest rate at 10 sat/vB, so at 5 sat/vB it would wait longer than 6 blocks; 10 sat/vB (1,410 sats) fits that horizon",
    );
    expect(synthesis!.figures).toContainEqual({
      name: 'fee_at_projected_floor',
      value: 1410,
      unit: 'sats',
      from: 'landscape',
    });
  });

  it('prices both bumps of a stuck transaction to the entry rate and to the fastest tier', () => {
    const { conclusion, synthesis } = conclude(
      ['stuck_transaction'],
      [
        ran('explain_transaction', {
          transaction: {
            txid: '50'.repeat(32),
            vsize: 225,
            fee_sat: 225,
            fee_rate_sat_vb: 1,
            confirmed: false,
            confirmations: 0,
            replaceable: false,
            package_rate_sat_vb: null,
          },
        }),
        ran('next_block', {
          next_block: { ...calmNextBlock.next_block!, entry_rate_sat_vb: 6.78, block_full: true },
        }),
        ran(
          'fee_advice',
          advice({
            urgency: 'high',
            horizon_blocks: 1,
            tier: 'fastest',
            rate_sat_vb: 17.625,
            fastest_sat_vb: 17.625,
          }),
        ),
      ],
    );
    expect(synthesis!.action).toBe('bump');
    // RBF to 6.78: ceil(6.78 × 225) = 1,526 (over 225 + 225 by the increment rule), 1,301 more.
    // CPFP to 6.78 with a 110 vB child: ceil(6.78 × 335) − 225 = 2,272 − 225 = 2,047.
    expect(conclusion).toContain(
      'to the entry rate, 6.78 sat/vB: RBF 1,301 sats more (a replacement paying 1,526 sats), or CPFP a 110 vB child paying 2,047 sats',
    );
    // To 17.625: ceil(3,965.625) = 3,966 (3,741 more); ceil(17.625 × 335) − 225 = 5,905 − 225 = 5,680.
    expect(conclusion).toContain(
      'to the fastest tier, 17.625 sat/vB, for a margin: RBF 3,741 sats more (a replacement paying 3,966 sats), or CPFP a 110 vB child paying 5,680 sats',
    );
    expect(conclusion).toContain('RBF costs less');
    expect(conclusion).toContain('does not signal BIP 125');
  });

  it('says a transaction that pays the entry rate needs nothing, and a confirmed one is done', () => {
    const tx = {
      txid: 'ab'.repeat(32),
      vsize: 141,
      fee_sat: 705,
      fee_rate_sat_vb: 5,
      confirmed: false,
      confirmations: 0,
      replaceable: true,
      package_rate_sat_vb: null,
    };
    const waiting = conclude(
      ['stuck_transaction'],
      [ran('explain_transaction', { transaction: tx }), ran('next_block', calmNextBlock)],
    );
    expect(waiting.synthesis!.action).toBe('nothing_to_do');
    expect(waiting.conclusion).toContain(
      "pays 5 sat/vB, at or above the next block's entry rate of 1 sat/vB",
    );
    const done = conclude(
      ['transaction'],
      [ran('explain_transaction', { transaction: { ...tx, confirmed: true, confirmations: 3 } })],
    );
    expect(done.conclusion).toContain('is confirmed (3 confirmations): nothing to do.');
  });

  it('does without a step that failed and says so, taking the signal from the landscape', () => {
    const { conclusion, synthesis } = conclude(
      ['send_timing'],
      [down('decision'), ran('landscape', landscape())],
    );
    expect(conclusion).toContain(
      'Send now: waiting for the economy tier (1 sat/vB, 141 sats for 141 vB) would save only 1 sat/vB',
    );
    expect(synthesis!.figures.find((f) => f.name === 'savings_sat_vb')!.from).toBe('landscape');
    expect(synthesis!.caveats).toContain(
      'The decision step was unavailable (decision: the upstream is unavailable (503)), so the conclusion does without it.',
    );
  });

  it('recommends no estimator when the scoreboard has scored nothing', () => {
    const { conclusion } = conclude(
      ['estimators'],
      [
        ran('observatory', {
          estimators: { window_hours: 168, best: [], empty_reason: 'no estimates in the window' },
        }),
      ],
    );
    expect(conclusion).toBe(
      'The scoreboard has no scored estimates yet (no estimates in the window), so no estimator can be recommended on evidence.',
    );
  });

  it('names the sources whose next-block quote would miss now', () => {
    const next = {
      next_block: {
        ...calmNextBlock.next_block!,
        entry_rate_sat_vb: 12,
        block_full: true,
        estimators: [
          { source: 'mempool.space', fastest_sat_vb: 13, gets_in: true, overpay_at_140_vbytes_sat: 140 },
          { source: 'esplora', fastest_sat_vb: 9.5, gets_in: false, overpay_at_140_vbytes_sat: 0 },
        ],
      },
    };
    const { conclusion } = conclude(
      ['estimators'],
      [ran('observatory', scoreboard), ran('next_block', next)],
    );
    expect(conclusion).toContain('esplora (9.5 sat/vB) would miss the next block now.');
    expect(conclusion).toContain(
      'The next block (height 910,011) takes 12 sat/vB now (it is full: its lowest included rate)',
    );
  });
});
