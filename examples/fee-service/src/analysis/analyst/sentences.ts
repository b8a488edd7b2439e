/**
 * The sentences an analyst conclusion is built from. Each combines the findings of one or more
 * steps and records the figures it states and the steps it drew on, so the conclusion's every
 * number can be traced to a step's evidence.
 */

import { feeForVsize } from '../../domain/fee-math';
import { bumpCosts } from '../calculations/bump';
import { fromRate } from '../calculations/decimal';
import { estimateSize, TYPICAL_CHILD, TYPICAL_PAYMENT } from '../calculations/sizes';
import { formatInt, formatRate, formatSats, plural } from '../format';
import type {
  AdviceFindings,
  BlockFindings,
  DecisionFindings,
  EstimatorFindings,
  LandscapeFindings,
  NextBlockFindings,
  TransactionFindings,
} from './findings';
import type { StepName } from './plan';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  from: StepName;
}

/** A sentence of the conclusion with the figures it states and the steps it combines. */
export interface Sentence {
  text: string;
  figures: Figure[];
  used: StepName[];
}

const pct = (share: number) => Math.round(share * 1000) / 10;
/** Size used for illustrative fees when the fee advice did not give one: a typical payment. */
export const TYPICAL_VSIZE = estimateSize(TYPICAL_PAYMENT).vsize;

/** send-wait-v1's verdict in words, with its figures. */
export function timing(d: DecisionFindings): Sentence {
  const figures: Figure[] = [
    { name: 'savings_sat_vb', value: d.savings_sat_vb, unit: 'sat/vB', from: 'decision' },
    { name: 'savings_percent', value: d.savings_percent, unit: '%', from: 'decision' },
    { name: 'savings_at_140_vbytes', value: d.savings_at_140_vbytes_sat, unit: 'sats', from: 'decision' },
  ];
  const backlog = d.reason_codes.includes('heavy_backlog')
    ? ' The backlog is heavy (8 blocks or more), so a low rate may wait hours.'
    : '';
  figures.push(
    { name: 'economy_rate', value: d.economy_sat_vb, unit: 'sat/vB', from: 'decision' },
    {
      name: 'economy_fee',
      value: feeForVsize(d.economy_sat_vb, TYPICAL_VSIZE),
      unit: 'sats',
      from: 'decision',
    },
  );
  const economy = `the economy tier (${formatRate(d.economy_sat_vb)}, ${formatSats(feeForVsize(d.economy_sat_vb, TYPICAL_VSIZE))} for ${TYPICAL_VSIZE} vB)`;
  const text =
    d.decision === 'send'
      ? `Send now: waiting for ${economy} would save only ${formatRate(d.savings_sat_vb)} (${d.savings_percent}% of the fastest rate, ${formatSats(d.savings_at_140_vbytes_sat)} on 140 vB), under send-wait-v1's thresholds of 2 sat/vB and 25%.${backlog}`
      : `Wait if the payment can take hours: ${economy} saves ${formatRate(d.savings_sat_vb)} (${d.savings_percent}% of the fastest rate, ${formatSats(d.savings_at_140_vbytes_sat)} on 140 vB), past send-wait-v1's thresholds of 2 sat/vB and 25%.${backlog}`;
  return { text, figures, used: ['decision'] };
}

/**
 * What the next block takes now and what the advised tier costs, for the same size; checked
 * against the projected block at the advice's horizon when the landscape projects that far.
 */
export function whatToPay(
  next: NextBlockFindings | undefined,
  advice: AdviceFindings | undefined,
  landscape?: LandscapeFindings,
): Sentence | undefined {
  if (!next && !advice) return undefined;
  const vsize = advice?.vsize ?? TYPICAL_VSIZE;
  const figures: Figure[] = [];
  const used: StepName[] = [];
  const parts: string[] = [];
  if (next) {
    const fee = feeForVsize(next.entry_rate_sat_vb, vsize);
    figures.push(
      { name: 'next_block_entry_rate', value: next.entry_rate_sat_vb, unit: 'sat/vB', from: 'next_block' },
      { name: 'next_block_fee', value: fee, unit: 'sats', from: 'next_block' },
    );
    used.push('next_block');
    parts.push(
      `the next block (height ${formatInt(next.height)}) takes ${formatRate(next.entry_rate_sat_vb)} now, ${formatSats(fee)} for ${vsize} vB (${next.block_full ? 'it is full: its lowest included rate' : 'it has room: the relay minimum'})`,
    );
  }
  if (advice) {
    figures.push(
      { name: 'advised_rate', value: advice.rate_sat_vb, unit: 'sat/vB', from: 'fee_advice' },
      { name: 'advised_fee', value: advice.fee_sat, unit: 'sats', from: 'fee_advice' },
    );
    used.push('fee_advice');
    const share =
      advice.fee_share_percent === null
        ? ''
        : advice.fee_share_percent === 0
          ? ' (under 0.01% of the amount sent)'
          : ` (${advice.fee_share_percent}% of the amount sent)`;
    if (advice.fee_share_percent !== null)
      figures.push({
        name: 'fee_share_percent',
        value: advice.fee_share_percent,
        unit: '%',
        from: 'fee_advice',
      });
    parts.push(
      `to confirm within ${plural(advice.horizon_blocks, 'block')} the ${advice.tier.replace('_', ' ')} tier quotes ${formatRate(advice.rate_sat_vb)}, ${formatSats(advice.fee_sat)} for ${advice.vsize} vB${share}`,
    );
    // The block at the horizon, as projected now: only a full one (not the last, which holds the
    // rest of the mempool) has a floor that means anything.
    const floors = landscape?.projected_block_floors_sat_vb ?? [];
    const floor = floors[advice.horizon_blocks - 1];
    if (
      landscape &&
      advice.horizon_blocks > 1 &&
      floors.length > advice.horizon_blocks &&
      floor !== undefined
    ) {
      used.push('landscape');
      figures.push({ name: 'projected_floor_at_horizon', value: floor, unit: 'sat/vB', from: 'landscape' });
      parts.push(
        advice.rate_sat_vb >= floor
          ? `the mempool as projected now agrees: block ${advice.horizon_blocks} of the projection takes ${formatRate(floor)}`
          : `but the mempool as projected now puts block ${advice.horizon_blocks}'s lowest rate at ${formatRate(floor)}, so at ${formatRate(advice.rate_sat_vb)} it would wait longer than ${plural(advice.horizon_blocks, 'block')}; ${formatRate(floor)} (${formatSats(feeForVsize(floor, advice.vsize))}) fits that horizon`,
      );
      if (advice.rate_sat_vb < floor)
        figures.push({
          name: 'fee_at_projected_floor',
          value: feeForVsize(floor, advice.vsize),
          unit: 'sats',
          from: 'landscape',
        });
    }
  }
  const text = parts.join('; ');
  return { text: `${text[0]!.toUpperCase()}${text.slice(1)}.`, figures, used };
}

/** Which estimator to trust per horizon (the scoreboard's ranking as it stands), and who gets in now. */
export function trust(
  est: EstimatorFindings | undefined,
  next: NextBlockFindings | undefined,
): Sentence | undefined {
  if (!est) return undefined;
  if (est.best.length === 0)
    return {
      text: `The scoreboard has no scored estimates yet (${est.empty_reason ?? 'no data'}), so no estimator can be recommended on evidence.`,
      figures: [],
      used: ['observatory'],
    };
  const figures: Figure[] = [];
  const wanted = [1, 6, 144];
  const chosen = est.best.filter((b) => wanted.includes(b.target));
  const rows = (chosen.length > 0 ? chosen : est.best.slice(0, 2)).map((b) => {
    figures.push(
      { name: `hit_rate_${b.target}`, value: pct(b.hit_rate), unit: '%', from: 'observatory' },
      { name: `estimates_${b.target}`, value: b.n, unit: 'estimates', from: 'observatory' },
    );
    const over =
      b.median_overpayment_sats_140 === null
        ? ''
        : `, median overpayment ${formatSats(b.median_overpayment_sats_140)} on 140 vB`;
    if (b.median_overpayment_sats_140 !== null)
      figures.push({
        name: `median_overpayment_${b.target}`,
        value: b.median_overpayment_sats_140,
        unit: 'sats',
        from: 'observatory',
      });
    return `for ${plural(b.target, 'block')} ${b.source} (${pct(b.hit_rate)}% of ${formatInt(b.n)} estimates hit${over})`;
  });
  const used: StepName[] = ['observatory'];
  let now = '';
  const firstBest = est.best.find((b) => b.target === 1);
  const quote = firstBest && next?.estimators.find((e) => e.source === firstBest.source);
  if (quote && next) {
    used.push('next_block');
    figures.push({
      name: 'best_source_next_block_quote',
      value: quote.fastest_sat_vb,
      unit: 'sat/vB',
      from: 'next_block',
    });
    if (!quote.gets_in)
      now = ` Its next-block quote now, ${formatRate(quote.fastest_sat_vb)}, falls short of the entry rate.`;
    else if (quote.overpay_at_140_vbytes_sat > 0) {
      figures.push({
        name: 'best_source_overpay_now',
        value: quote.overpay_at_140_vbytes_sat,
        unit: 'sats',
        from: 'next_block',
      });
      now = ` Its next-block quote now, ${formatRate(quote.fastest_sat_vb)}, gets in but pays ${formatSats(quote.overpay_at_140_vbytes_sat)} more than the entry rate on 140 vB.`;
    } else now = ` Its next-block quote now, ${formatRate(quote.fastest_sat_vb)}, is the entry rate.`;
  }
  const missing = next?.estimators.filter((e) => !e.gets_in) ?? [];
  const misses =
    missing.length > 0
      ? ` ${missing.map((e) => `${e.source} (${formatRate(e.fastest_sat_vb)})`).join(', ')} would miss the next block now.`
      : '';
  return {
    text: `Over the last ${est.window_hours} hours the scoreboard ranks first ${rows.join('; ')}.${now}${misses}`,
    figures,
    used,
  };
}

/** Where fees are heading, and what it means for the action. */
export function trend(
  l: LandscapeFindings | undefined,
  action: 'send' | 'wait' | 'other',
): Sentence | undefined {
  if (!l) return undefined;
  const change = `${l.trend_change_percent > 0 ? '+' : ''}${l.trend_change_percent}%`;
  const meaning =
    l.trend_direction === 'rising'
      ? action === 'wait'
        ? ': waiting may cost more than it saves, so signal RBF and start low if you wait'
        : ': sending sooner rather than later is the safer side'
      : l.trend_direction === 'falling'
        ? action === 'send'
          ? ': if it is not urgent, a few blocks may bring lower rates'
          : ': that favours waiting'
        : '';
  return {
    text: `Block median rates are ${l.trend_direction} (${change}) and the environment is ${l.environment}${meaning}. The ${plural(l.sources_quoting, 'source')} quote${l.sources_quoting === 1 ? 's' : ''} ${l.fastest_low_sat_vb === l.fastest_high_sat_vb ? formatRate(l.fastest_high_sat_vb) : `${formatRate(l.fastest_low_sat_vb)} to ${formatRate(l.fastest_high_sat_vb)}`} for the next block.`,
    figures: [
      { name: 'trend_change_percent', value: l.trend_change_percent, unit: '%', from: 'landscape' },
      { name: 'fastest_low', value: l.fastest_low_sat_vb, unit: 'sat/vB', from: 'landscape' },
      { name: 'fastest_high', value: l.fastest_high_sat_vb, unit: 'sat/vB', from: 'landscape' },
    ],
    used: ['landscape'],
  };
}

/** A transaction against the next block, and what it takes to bump it there both ways. */
export function transactionVerdict(
  tx: TransactionFindings,
  next: NextBlockFindings | undefined,
  advice: AdviceFindings | undefined,
): { sentence: Sentence; action: 'bump' | 'nothing_to_do' | 'none' } {
  const figures: Figure[] = [];
  const id = `Transaction ${tx.txid.slice(0, 16)}…`;
  if (tx.confirmed) {
    figures.push({
      name: 'confirmations',
      value: tx.confirmations,
      unit: 'confirmations',
      from: 'explain_transaction',
    });
    return {
      sentence: {
        text: `${id} is confirmed (${plural(tx.confirmations, 'confirmation')}): nothing to do.`,
        figures,
        used: ['explain_transaction'],
      },
      action: 'nothing_to_do',
    };
  }
  const rate = tx.package_rate_sat_vb ?? tx.fee_rate_sat_vb;
  if (rate === null || tx.fee_sat === null || !next) {
    return {
      sentence: {
        text: `${id} is unconfirmed; its fee or the next block is unknown, so no bump can be computed.`,
        figures,
        used: ['explain_transaction'],
      },
      action: 'none',
    };
  }
  figures.push(
    { name: 'transaction_rate', value: rate, unit: 'sat/vB', from: 'explain_transaction' },
    { name: 'next_block_entry_rate', value: next.entry_rate_sat_vb, unit: 'sat/vB', from: 'next_block' },
  );
  const what = tx.package_rate_sat_vb !== null ? 'its package pays' : 'it pays';
  if (rate >= next.entry_rate_sat_vb)
    return {
      sentence: {
        text: `${id} is unconfirmed and ${what} ${formatRate(rate)}, at or above the next block's entry rate of ${formatRate(next.entry_rate_sat_vb)}: as projected now it gets into the next block, so wait for it.`,
        figures,
        used: ['explain_transaction', 'next_block'],
      },
      action: 'nothing_to_do',
    };
  // The entry rate is the least that gets in as projected now; the fastest tier adds the margin
  // estimators keep for transactions arriving before the block is found.
  const child = estimateSize(TYPICAL_CHILD).vsize;
  const targets = [next.entry_rate_sat_vb];
  if (advice && advice.fastest_sat_vb > next.entry_rate_sat_vb) targets.push(advice.fastest_sat_vb);
  const options = targets.map((target, i) => {
    const costs = bumpCosts({
      stuck: { vsize: tx.vsize, fee_sat: BigInt(tx.fee_sat!) },
      target: fromRate(target),
      childVsize: child,
      // Below the target the package rule binds first, so the entry rate is a safe stand-in.
      relayMinimum: fromRate(advice?.minimum_sat_vb ?? next.entry_rate_sat_vb),
    });
    const label = i === 0 ? 'entry' : 'fastest';
    figures.push(
      {
        name: `bump_target_${label}`,
        value: target,
        unit: 'sat/vB',
        from: i === 0 ? 'next_block' : 'fee_advice',
      },
      {
        name: `rbf_extra_${label}`,
        value: Number(costs.rbf.extra_sat),
        unit: 'sats',
        from: 'explain_transaction',
      },
      {
        name: `cpfp_child_fee_${label}`,
        value: Number(costs.cpfp.child_fee_sat),
        unit: 'sats',
        from: 'explain_transaction',
      },
    );
    const what =
      i === 0
        ? `to the entry rate, ${formatRate(target)}`
        : `to the fastest tier, ${formatRate(target)}, for a margin`;
    return {
      costs,
      text: `${what}: RBF ${formatSats(Number(costs.rbf.extra_sat))} more (a replacement paying ${formatSats(Number(costs.rbf.new_fee_sat))}), or CPFP a ${child} vB child paying ${formatSats(Number(costs.cpfp.child_fee_sat))}`,
    };
  });
  const cheaper = options[0]!.costs.cheaper === 'cpfp' ? 'CPFP' : 'RBF';
  const replaceable = tx.replaceable
    ? 'It signals replaceability.'
    : 'It does not signal BIP 125, but nodes with full RBF (the default since Bitcoin Core 28.0) relay a replacement anyway.';
  return {
    sentence: {
      text: `${id} is unconfirmed and ${what} ${formatRate(rate)}, below the next block's entry rate of ${formatRate(next.entry_rate_sat_vb)}: bump it. For its ${tx.vsize} vB, ${options.map((o) => o.text).join('; ')}. ${cheaper} costs less; CPFP needs an output you control. ${replaceable}`,
      figures,
      used:
        targets.length > 1
          ? ['explain_transaction', 'next_block', 'fee_advice']
          : ['explain_transaction', 'next_block'],
    },
    action: 'bump',
  };
}

/** A block against the ones before it and the market now. */
export function blockVerdict(
  b: BlockFindings,
  next: NextBlockFindings | undefined,
  l: LandscapeFindings | undefined,
): Sentence {
  const figures: Figure[] = [
    { name: 'fullness_percent', value: b.fullness_percent, unit: '%', from: 'explain_block' },
  ];
  const used: StepName[] = ['explain_block'];
  let text = `Block ${formatInt(b.height)} was ${b.fullness_percent}% full`;
  if (b.median_rate_sat_vb !== null) {
    figures.push({
      name: 'block_median_rate',
      value: b.median_rate_sat_vb,
      unit: 'sat/vB',
      from: 'explain_block',
    });
    text += ` with a median rate of ${formatRate(b.median_rate_sat_vb)}`;
    if (b.recent_median_sat_vb !== null && b.comparison)
      text += `, ${b.comparison === 'in_line' ? 'in line with' : `${b.comparison} than`} the blocks before it (${formatRate(b.recent_median_sat_vb)})`;
  }
  text += '.';
  if (next) {
    used.push('next_block');
    figures.push({
      name: 'next_block_entry_rate',
      value: next.entry_rate_sat_vb,
      unit: 'sat/vB',
      from: 'next_block',
    });
    text += ` The next block takes ${formatRate(next.entry_rate_sat_vb)} now.`;
  }
  if (l) {
    used.push('landscape');
    text += ` Block median rates are ${l.trend_direction} (${l.trend_change_percent}%).`;
  }
  return { text, figures, used };
}
