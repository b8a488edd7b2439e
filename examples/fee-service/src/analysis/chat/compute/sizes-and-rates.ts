/**
 * The chat's size and rate calculations: the fee of a size at a rate (rounded up to whole sats),
 * the rate a fee pays, a rate in every unit, vsize from weight or from a transaction's shape,
 * BTC and sats, and dust.
 */

import { feeAt } from '../../calculations/bump';
import {
  type Decimal,
  dividedBy,
  fromInteger,
  fromRate,
  shift,
  times,
  toGrouped,
  toNumber,
} from '../../calculations/decimal';
import {
  DUST_RELAY_SAT_VB,
  DUST_THRESHOLDS_SAT,
  estimateSize,
  OUTPUT_TYPES,
  type TransactionShape,
  TYPICAL_PAYMENT,
} from '../../calculations/sizes';
import { formatInt, formatRate, formatSats, kindName } from '../../format';
import { type FeeMarket, feeRate, tierMet } from '../../market';
import type { Quantities } from './quantities';
import type { Computation, ComputedFigure } from './types';

const sat = (n: bigint | number) => formatSats(Number(n));
const rateText = (d: Decimal) => `${toGrouped(d)} sat/vB`;
const figure = (name: string, value: number, unit: string): ComputedFigure => ({ name, value, unit });

/** "1 P2WPKH input and 2 P2TR outputs". */
export function describeShape(shape: TransactionShape): string {
  const name = (t: string) => kindName(t).split(' ')[0]!;
  const part = (list: { type: string; count: number }[], noun: string) =>
    list.map((x) => `${x.count} ${name(x.type)} ${x.count === 1 ? noun : `${noun}s`}`).join(' and ');
  return `${part(shape.inputs, 'input')} and ${part(shape.outputs, 'output')}`;
}

export interface SizeReading {
  vsize: number;
  /** How the vsize was found, as a phrase ("141 vB", "weight 561 WU, so 141 vB"). */
  how: string;
  inputs: ComputedFigure[];
  assumptions: string[];
}

/** The size a question states, or its shape's estimate; the typical payment when `fallback`. */
export function sizeOf(q: Quantities, fallback: boolean): SizeReading | undefined {
  const size = q.sizes[0];
  if (size?.from === 'vB')
    return {
      vsize: size.vsize,
      how: `${formatInt(size.vsize)} vB`,
      inputs: [figure('vsize', size.vsize, 'vB')],
      assumptions: [],
    };
  if (size?.from === 'weight')
    return {
      vsize: size.vsize,
      how: `weight ${formatInt(size.stated)} WU, which is ${formatInt(size.vsize)} vB (weight / 4, rounded up)`,
      inputs: [figure('weight', size.stated, 'WU'), figure('vsize', size.vsize, 'vB')],
      assumptions: [],
    };
  if (size?.from === 'bytes')
    return {
      vsize: size.vsize,
      how: `${formatInt(size.vsize)} vB`,
      inputs: [figure('vsize', size.vsize, 'vB')],
      assumptions: [
        'Bytes were read as virtual bytes: the same for a transaction without witness data, more than its vsize for a SegWit one.',
      ],
    };
  if (q.shape) {
    const { weight, vsize } = estimateSize(q.shape);
    return {
      vsize,
      how: `${describeShape(q.shape)} (about ${formatInt(vsize)} vB)`,
      inputs: [figure('weight', weight, 'WU'), figure('vsize', vsize, 'vB')],
      assumptions: [
        'The size is estimated from the serialization with 72-byte signatures (the upper end of their size): the real one may be a few vB smaller.',
      ],
    };
  }
  if (!fallback) return undefined;
  const { vsize } = estimateSize(TYPICAL_PAYMENT);
  return {
    vsize,
    how: `a typical ${vsize} vB payment`,
    inputs: [figure('vsize', vsize, 'vB')],
    assumptions: [
      `No size was given: a typical payment is assumed (1 P2WPKH input, 2 P2WPKH outputs, ${vsize} vB).`,
    ],
  };
}

/** Tiers the question names ("at the economy rate"), in tier order. */
export function tiersNamed(text: string): (keyof FeeMarket['tiers'])[] {
  const named: (keyof FeeMarket['tiers'])[] = [];
  if (/\bfastest\b/.test(text)) named.push('fastest');
  if (/\bhalf[\s-]hour\b/.test(text)) named.push('half_hour');
  if (/(?<!half[\s-])\bhour\s+(?:tier|rate|fee)\b/.test(text)) named.push('hour');
  if (/\beconomy\b/.test(text)) named.push('economy');
  if (/\bminimum\s+(?:tier|rate|fee)\b/.test(text)) named.push('minimum');
  return named;
}

const TIER_LABEL: Record<keyof FeeMarket['tiers'], string> = {
  fastest: 'fastest (next block)',
  half_hour: 'half hour (about 3 blocks)',
  hour: 'hour (about 6 blocks)',
  economy: 'economy',
  minimum: 'minimum',
};

/** fee = rate × vsize, rounded up to whole sats, for every stated rate, or at the live tiers. */
export function feeForSize(q: Quantities, market: FeeMarket): Computation | undefined {
  const size = sizeOf(q, true);
  if (!size) return undefined;
  const inputs = [...size.inputs];
  const results: ComputedFigure[] = [];
  const assumptions = [...size.assumptions];
  const parts: string[] = [];
  if (q.rates.length > 0) {
    for (const rate of q.rates) {
      const exact = times(rate.satVb, size.vsize);
      const fee = feeAt(rate.satVb, size.vsize);
      inputs.push(figure('fee_rate', toNumber(rate.satVb), 'sat/vB'));
      results.push(figure('fee', Number(fee), 'sats'));
      const rounding =
        exact.scale > 0
          ? ` (${toGrouped(rate.satVb)} × ${formatInt(size.vsize)} = ${toGrouped(exact)}, rounded up to whole sats)`
          : '';
      parts.push(`${sat(fee)} at ${rateText(rate.satVb)}${rounding}`);
      if (rate.assumedUnit) assumptions.push(`${toGrouped(rate.value)} was read as a rate in sat/vB.`);
    }
  } else {
    const named = tiersNamed(q.text);
    for (const tier of named.length > 0 ? named : (Object.keys(TIER_LABEL) as (keyof FeeMarket['tiers'])[])) {
      const rate = market.tiers[tier];
      const fee = feeAt(fromRate(rate), size.vsize);
      inputs.push(figure(`${tier}_fee_rate`, rate, 'sat/vB'));
      results.push(figure(`fee_at_${tier}`, Number(fee), 'sats'));
      parts.push(`${sat(fee)} at the ${TIER_LABEL[tier]} rate of ${formatRate(rate)}`);
    }
    assumptions.push('The rates are the live tiers: estimates, not promises of a confirmation time.');
  }
  let share = '';
  const amount = q.amounts.find((a) => a.unit === 'BTC') ?? (q.rates.length > 0 ? q.amounts[0] : undefined);
  if (amount && amount.sats > 0n && results.length > 0) {
    const fee = BigInt(results[0]!.value);
    const percent = Number((fee * 1_000_000n) / amount.sats) / 10_000;
    inputs.push(figure('amount', Number(amount.sats), 'sats'));
    results.push(figure('fee_share_of_amount', percent, '%'));
    share = ` That fee is ${percent}% of the ${sat(amount.sats)} sent.`;
  }
  const lead = `The fee for ${size.how} is ${parts.join(q.rates.length > 0 ? '; ' : ', ')}.`;
  return {
    kind: 'fee_for_size',
    inputs,
    results,
    rule: 'fee = fee rate × vsize, rounded up to whole sats',
    assumptions,
    text: `${lead}${share}`,
  };
}

const TIER_HORIZON: Record<keyof FeeMarket['tiers'], string> = {
  fastest: 'the next-block estimate',
  half_hour: 'about 3 blocks',
  hour: 'about 6 blocks',
  economy: 'about a day',
  minimum: 'the lowest rate nodes keep',
};

/** Where a rate stands against the live tiers and the next block's floor. */
function standing(rate: number, tier: keyof FeeMarket['tiers'] | 'below_minimum', market: FeeMarket): string {
  const floor = market.next_block_floor_sat_vb;
  if (tier === 'below_minimum')
    return `That is below today's minimum tier of ${formatRate(market.tiers.minimum)}: nodes may not accept it.`;
  const met = `That meets today's ${tier.replace('_', ' ')} tier (${formatRate(market.tiers[tier])}, ${TIER_HORIZON[tier]})`;
  return rate >= floor
    ? `${met} and the next block's floor of ${formatRate(floor)}: as projected now, it would get into the next block.`
    : `${met} but not the next block's floor of ${formatRate(floor)}: as projected now, it would wait for a later block.`;
}

/** The rate a stated fee pays for a stated size, against the live tiers and the next-block floor. */
export function rateOfFee(q: Quantities, market: FeeMarket): Computation | undefined {
  const size = sizeOf(q, false);
  const fee = q.amounts.find((a) => a.unit === 'sat') ?? q.amounts[0];
  if (!size || !fee) return undefined;
  const rate = feeRate(Number(fee.sats), size.vsize);
  const tier = tierMet(rate, market.tiers);
  const floor = market.next_block_floor_sat_vb;
  return {
    kind: 'rate_of_fee',
    inputs: [
      figure('fee', Number(fee.sats), 'sats'),
      ...size.inputs,
      figure('next_block_floor', floor, 'sat/vB'),
    ],
    results: [figure('fee_rate', rate, 'sat/vB')],
    rule: 'fee rate = fee / vsize, to three decimals',
    assumptions: ['Against the live tiers: the market moves with every block and every new transaction.'],
    text: `${sat(fee.sats)} for ${size.how} is ${formatRate(rate)}. ${standing(rate, tier, market)}`,
  };
}

/** A rate in sat/vB, BTC/kvB, sat/kvB and sat/WU. */
export function rateUnits(q: Quantities): Computation | undefined {
  if (q.rates.length === 0) return undefined;
  const inputs: ComputedFigure[] = [];
  const results: ComputedFigure[] = [];
  const sentences = q.rates.map((rate) => {
    const satVb = rate.satVb;
    const btcKvb = shift(satVb, -5);
    const satKvb = shift(satVb, 3);
    const satWu = dividedBy(satVb, 4);
    inputs.push(figure('rate', toNumber(rate.value), rate.unit));
    results.push(
      figure('sat_per_vb', toNumber(satVb), 'sat/vB'),
      figure('btc_per_kvb', toNumber(btcKvb), 'BTC/kvB'),
      figure('sat_per_kvb', toNumber(satKvb), 'sat/kvB'),
      figure('sat_per_wu', toNumber(satWu), 'sat/WU'),
    );
    const all = [
      `${toGrouped(satVb)} sat/vB`,
      `${toGrouped(btcKvb)} BTC/kvB`,
      `${toGrouped(satKvb)} sat/kvB`,
      `${toGrouped(satWu)} sat/WU`,
    ];
    const stated = all.findIndex((text) => text.endsWith(` ${rate.unit}`));
    return `${all[stated]} = ${all.filter((_, i) => i !== stated).join(' = ')}.`;
  });
  const assumed = q.rates.filter((r) => r.assumedUnit);
  return {
    kind: 'rate_units',
    inputs,
    results,
    rule: '1 sat/vB = 1,000 sat/kvB = 0.00001 BTC/kvB (100,000,000 sats to the bitcoin) = 0.25 sat/WU (4 weight units to the vbyte); Bitcoin Core answers estimatesmartfee in BTC/kvB',
    assumptions: assumed.map(
      (r) => `${toGrouped(r.value)} was read as ${r.unit}, the unit of Bitcoin Core's estimatesmartfee.`,
    ),
    text: sentences.join(' '),
  };
}

/** vsize from weight, or weight and vsize of a described transaction. */
export function vsizeOf(q: Quantities): Computation | undefined {
  const weight = q.sizes.find((s) => s.from === 'weight');
  if (weight) {
    const exact = dividedBy(fromInteger(weight.stated), 4);
    return {
      kind: 'vsize',
      inputs: [figure('weight', weight.stated, 'WU')],
      results: [figure('vsize', weight.vsize, 'vB')],
      rule: 'vsize = weight / 4, rounded up (BIP 141)',
      assumptions: [],
      text: `A weight of ${formatInt(weight.stated)} WU is ${toGrouped(exact)} vbytes${exact.scale > 0 ? `, rounded up to ${formatInt(weight.vsize)} vB` : ''}.`,
    };
  }
  const vb = q.sizes.find((s) => s.from === 'vB');
  if (vb && /\bweight\b/.test(q.text)) {
    return {
      kind: 'vsize',
      inputs: [figure('vsize', vb.vsize, 'vB')],
      results: [figure('weight_min', vb.vsize * 4 - 3, 'WU'), figure('weight_max', vb.vsize * 4, 'WU')],
      rule: 'vsize = weight / 4, rounded up (BIP 141), so a vsize fixes the weight to within 3 WU',
      assumptions: [],
      text: `${formatInt(vb.vsize)} vB is a weight of ${formatInt(vb.vsize * 4 - 3)} to ${formatInt(vb.vsize * 4)} WU.`,
    };
  }
  if (!q.shape) return undefined;
  const { weight: w, vsize } = estimateSize(q.shape);
  return {
    kind: 'vsize',
    inputs: q.shape.inputs
      .map((i) => figure(`${i.type}_inputs`, i.count, 'inputs'))
      .concat(q.shape.outputs.map((o) => figure(`${o.type}_outputs`, o.count, 'outputs'))),
    results: [figure('weight', w, 'WU'), figure('vsize', vsize, 'vB')],
    rule: 'weight = 4 × bytes outside the witness + witness bytes; vsize = weight / 4, rounded up',
    assumptions: [
      '72-byte signatures (the upper end of their size): the real transaction may be a few vB smaller.',
    ],
    text: `A transaction with ${describeShape(q.shape)} weighs about ${formatInt(w)} WU: ${formatInt(vsize)} vB.`,
  };
}

/** BTC to sats and back. */
export function amountUnits(q: Quantities): Computation | undefined {
  if (q.amounts.length === 0) return undefined;
  const sentences = q.amounts.map((a) =>
    a.unit === 'BTC'
      ? `${toGrouped(a.value)} BTC is ${sat(a.sats)}.`
      : `${sat(a.sats)} is ${toGrouped(shift(fromInteger(a.sats), -8))} BTC.`,
  );
  return {
    kind: 'amount_units',
    inputs: q.amounts.map((a) => figure('amount', toNumber(a.value), a.unit === 'BTC' ? 'BTC' : 'sats')),
    results: q.amounts.flatMap((a) => [
      figure('sats', Number(a.sats), 'sats'),
      figure('btc', toNumber(shift(fromInteger(a.sats), -8)), 'BTC'),
    ]),
    rule: '1 BTC = 100,000,000 sats',
    assumptions: [],
    text: sentences.join(' '),
  };
}

/** Dust thresholds per output type, and whether a stated amount is dust. */
export function dust(q: Quantities): Computation {
  const amount = q.amounts[0];
  const list = OUTPUT_TYPES.map(
    (t) => `${kindName(t).split(' ')[0]} ${formatInt(DUST_THRESHOLDS_SAT[t])}`,
  ).join(', ');
  let verdict = '';
  if (amount) {
    const under = OUTPUT_TYPES.filter((t) => amount.sats < BigInt(DUST_THRESHOLDS_SAT[t]));
    const names = (types: readonly string[]) => types.map((t) => kindName(t).split(' ')[0]).join(', ');
    const fine = OUTPUT_TYPES.filter((t) => !under.includes(t));
    verdict =
      under.length === 0
        ? ` An output of ${sat(amount.sats)} is above every one of them: not dust.`
        : ` An output of ${sat(amount.sats)} is dust as ${names(under)}${fine.length > 0 ? `, not as ${names(fine)}` : ''}.`;
  }
  return {
    kind: 'dust',
    inputs: [
      figure('dust_relay_rate', DUST_RELAY_SAT_VB, 'sat/vB'),
      ...(amount ? [figure('amount', Number(amount.sats), 'sats')] : []),
    ],
    results: OUTPUT_TYPES.map((t) => figure(`dust_threshold_${t}`, DUST_THRESHOLDS_SAT[t], 'sats')),
    rule: 'an output is dust when it holds less than what creating and spending it costs at the dust relay rate of 3 sat/vB',
    assumptions: ['Bitcoin Core’s default dust relay rate; a node can be configured otherwise.'],
    text: `Outputs below these amounts are dust, which nodes do not relay: ${list} sats.${verdict}`,
  };
}
