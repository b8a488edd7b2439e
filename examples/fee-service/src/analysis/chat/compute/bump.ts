/**
 * RBF against CPFP for a stuck transaction: what each costs to reach a target rate, which is
 * cheaper, and who can do which. The figures the question gives are used; what it leaves out is
 * taken from the live market and said so.
 */
import { bumpCosts, feeAt, INCREMENTAL_RELAY_SAT_VB } from '../../calculations/bump';
import { compare, type Decimal, fromRate, toGrouped, toNumber } from '../../calculations/decimal';
import { estimateSize, TYPICAL_CHILD } from '../../calculations/sizes';
import { formatInt, formatSats } from '../../format';
import type { FeeMarket } from '../../market';
import type { Quantities } from './quantities';
import { sizeOf, tiersNamed } from './sizes-and-rates';
import type { Computation, ComputedFigure } from './types';

const figure = (name: string, value: number, unit: string): ComputedFigure => ({ name, value, unit });
const sat = (n: bigint) => formatSats(Number(n));
const rateText = (d: Decimal) => `${toGrouped(d)} sat/vB`;
/** Words before a rate that make it the target ("bump it to 20 sat/vB"). */
const TARGET_WORDS = /\b(?:to|target(?:ing)?|reach|want|need|at least|up to)\s*$/;

/** The stuck transaction's fee, the target and the sizes, from the question or the market. */
function readCase(q: Quantities, market: FeeMarket) {
  const assumptions: string[] = [];
  const size = sizeOf(q, true)!;
  assumptions.push(...size.assumptions);
  const targets = q.rates.filter((r) => TARGET_WORDS.test(q.text.slice(Math.max(0, r.at - 24), r.at)));
  const paidRates = q.rates.filter((r) => !targets.includes(r));
  let target: Decimal;
  if (targets.length > 0) target = targets[0]!.satVb;
  else if (paidRates.length >= 2) target = paidRates.pop()!.satVb;
  else {
    const tier = tiersNamed(q.text)[0] ?? 'fastest';
    target = fromRate(market.tiers[tier]);
    assumptions.push(`Target: the live ${tier.replace('_', ' ')} tier, ${rateText(target)}.`);
  }
  let fee: bigint;
  const paidSats = q.amounts.find((a) => a.unit === 'sat');
  if (paidSats) fee = paidSats.sats;
  else if (paidRates[0]) fee = feeAt(paidRates[0].satVb, size.vsize);
  else {
    fee = feeAt(fromRate(market.tiers.minimum), size.vsize);
    assumptions.push(
      `No fee was given: the transaction is assumed to pay today's minimum tier (${rateText(fromRate(market.tiers.minimum))}).`,
    );
  }
  const child = estimateSize(TYPICAL_CHILD).vsize;
  assumptions.push(
    `The child spends one P2WPKH output to one P2WPKH output (${child} vB); RBF assumes Bitcoin Core's incremental relay rate before 29.1, ${INCREMENTAL_RELAY_SAT_VB} sat/vB.`,
  );
  return {
    size,
    target,
    fee,
    child,
    assumptions,
    stated: paidSats !== undefined || paidRates[0] !== undefined,
  };
}

const WHO_CAN =
  'Only the sender can replace (RBF needs its inputs; since Bitcoin Core 28.0 nodes accept replacements without the BIP 125 signal); CPFP needs an output you control, so it is the receiver’s tool, or the sender’s through its change.';
/** The rule of both computations, as `rule` states it. */
const BUMP_RULE =
  'RBF: new fee ≥ target × vsize and ≥ old fee + incremental relay rate × vsize (BIP 125); CPFP: child fee = target × (parent vsize + child vsize) − parent fee, at least the relay minimum on the child';
const RULES =
  'RBF pays the target rate on the transaction’s own size (and at least the old fee plus the incremental relay rate on it); CPFP pays the target on both sizes minus what the parent pays, so the child’s own bytes make it dearer for the same target.';

/** Both ways of bumping, with their costs. */
export function bump(q: Quantities, market: FeeMarket): Computation {
  const { size, target, fee, child, assumptions, stated } = readCase(q, market);
  const paidRate = Number((fee * 1000n) / BigInt(size.vsize)) / 1000;
  const stuckInputs = [
    figure('vsize', size.vsize, 'vB'),
    figure('fee', Number(fee), 'sats'),
    figure('target_fee_rate', toNumber(target), 'sat/vB'),
  ];
  if (compare(fromRate(paidRate), target) >= 0) {
    const text = stated
      ? `It already pays ${paidRate} sat/vB, at or above ${rateText(target)}: no bump is needed for that target.`
      : `At today's rates nothing needs bumping: a transaction paying the minimum tier (${rateText(fromRate(market.tiers.minimum))}) already meets the ${rateText(target)} target.`;
    return {
      kind: 'bump',
      inputs: stuckInputs,
      results: [],
      rule: BUMP_RULE,
      assumptions,
      text: `${text} ${RULES} ${WHO_CAN}`,
    };
  }
  const costs = bumpCosts({
    stuck: { vsize: size.vsize, fee_sat: fee },
    target,
    childVsize: child,
    relayMinimum: fromRate(market.tiers.minimum),
  });
  const difference = costs.rbf.extra_sat - costs.cpfp.child_fee_sat;
  const cheaper =
    costs.cheaper === 'equal'
      ? 'Both cost the same here.'
      : costs.cheaper === 'rbf'
        ? `RBF is cheaper by ${sat(-difference)}: the child's own ${formatInt(child)} vB must be paid for too.`
        : `CPFP is cheaper by ${sat(difference)} here: the replacement must also pay the incremental relay rate on its whole size.`;
  const text = [
    `To lift ${size.how} paying ${sat(fee)} to ${rateText(target)}:`,
    `RBF replaces it with a version paying ${sat(costs.rbf.new_fee_sat)}, ${sat(costs.rbf.extra_sat)} more${costs.rbf.bound_by === 'incremental_relay' ? ' (the old fee plus 1 sat/vB on its size, the replacement rule)' : ''};`,
    `CPFP spends one of its outputs in a ${formatInt(child)} vB child paying ${sat(costs.cpfp.child_fee_sat)}, so the pair pays ${costs.cpfp.package_rate_sat_vb} sat/vB together.`,
    cheaper,
    WHO_CAN,
  ];
  return {
    kind: 'bump',
    inputs: [...stuckInputs, figure('child_vsize', child, 'vB')],
    results: [
      figure('rbf_new_fee', Number(costs.rbf.new_fee_sat), 'sats'),
      figure('rbf_extra', Number(costs.rbf.extra_sat), 'sats'),
      figure('cpfp_child_fee', Number(costs.cpfp.child_fee_sat), 'sats'),
      figure('cpfp_package_rate', costs.cpfp.package_rate_sat_vb, 'sat/vB'),
    ],
    rule: BUMP_RULE,
    assumptions,
    text: text.join(' '),
  };
}
