/**
 * The quantities a question states, each with its unit: fee rates (sat/vB, BTC/kvB, sat/kvB,
 * sat/WU), sizes (vB, weight units, bytes), amounts (BTC, sats), block counts, durations, heights
 * and a transaction's shape (inputs and outputs by script type). Units are matched longest first
 * and each number is read once, so "2.5 sat/vB" is a rate and never also "2.5 sat".
 */
import { type Decimal, parseDecimal, shift, times, toNumber } from '../../calculations/decimal';
import type { InputType, OutputType, TransactionShape } from '../../calculations/sizes';

export type RateUnit = 'sat/vB' | 'BTC/kvB' | 'sat/kvB' | 'sat/WU';

export interface StatedRate {
  value: Decimal;
  unit: RateUnit;
  /** The same rate in sat/vB. */
  satVb: Decimal;
  /** Where it is in the question (to tell "paid X … bump to Y" apart). */
  at: number;
  /** True for a bare number after "at" that the question gave no unit for. */
  assumedUnit: boolean;
}

export interface StatedSize {
  vsize: number;
  from: 'vB' | 'weight' | 'bytes';
  /** The number as stated (weight units for `weight`). */
  stated: number;
  at: number;
}

export interface StatedAmount {
  sats: bigint;
  unit: 'BTC' | 'sat';
  value: Decimal;
  at: number;
}

export interface Quantities {
  text: string;
  rates: StatedRate[];
  sizes: StatedSize[];
  amounts: StatedAmount[];
  blocks: { count: number; noun: 'block' | 'confirmation' }[];
  minutes: number[];
  heights: number[];
  shape?: TransactionShape;
}

const NUM = String.raw`(\d+(?:\.\d+)?)`;
const SATS = '(?:sats?|satoshis?|s)';
const VBYTE = String.raw`(?:v\s*-?\s*b(?:ytes?)?|virtual\s+bytes?)`;
const KVB = String.raw`(?:kvb|kb|kvbytes?|kilo-?v?bytes?|1000\s*v?b(?:ytes?)?)`;
const PER = String.raw`\s*(?:\/|per)\s*`;

interface UnitPattern {
  pattern: RegExp;
  read: (value: Decimal, q: Quantities, at: number, match: RegExpExecArray) => void;
}

const rate =
  (unit: RateUnit, toSatVb: (d: Decimal) => Decimal) => (value: Decimal, q: Quantities, at: number) =>
    q.rates.push({ value, unit, satVb: toSatVb(value), at, assumedUnit: false });
const whole = (d: Decimal) => (d.scale === 0 ? Number(d.units) : Math.ceil(toNumber(d)));

const TYPE_WORDS: readonly [RegExp, InputType & OutputType][] = [
  [/\b(?:p2tr|taproot)\b/, 'p2tr'],
  [/\b(?:p2pkh|legacy)\b/, 'p2pkh'],
  [/\b(?:p2wpkh|native\s+segwit|segwit|bech32)\b/, 'p2wpkh'],
];
const NESTED = /\b(?:p2sh-p2wpkh|nested\s+segwit|wrapped\s+segwit)\b/;
const typeNear = (text: string): InputType | undefined => {
  if (NESTED.test(text)) return 'p2sh-p2wpkh';
  return TYPE_WORDS.find(([re]) => re.test(text))?.[1];
};

/** Units, longest and most specific first. */
const UNITS: readonly UnitPattern[] = [
  {
    pattern: new RegExp(`${NUM}\\s*btc${PER}${KVB}\\b`, 'g'),
    read: rate('BTC/kvB', (d) => shift(d, 5)),
  },
  {
    pattern: new RegExp(`${NUM}\\s*${SATS}${PER}${KVB}\\b`, 'g'),
    read: rate('sat/kvB', (d) => shift(d, -3)),
  },
  {
    pattern: new RegExp(`${NUM}\\s*${SATS}${PER}(?:wu|weight\\s*units?)\\b`, 'g'),
    read: rate('sat/WU', (d) => times(d, 4)),
  },
  {
    pattern: new RegExp(`${NUM}\\s*${SATS}${PER}(?:${VBYTE}|bytes?|b)\\b`, 'g'),
    read: rate('sat/vB', (d) => d),
  },
  {
    pattern: new RegExp(`${NUM}\\s*${VBYTE}\\b`, 'g'),
    read: (d, q, at) => q.sizes.push({ vsize: whole(d), from: 'vB', stated: toNumber(d), at }),
  },
  {
    pattern: new RegExp(
      `${NUM}\\s*(?:wu|weight\\s+units?)\\b|\\bweight\\s+(?:of\\s+|is\\s+|=\\s*)?${NUM}`,
      'g',
    ),
    read: (d, q, at) =>
      q.sizes.push({ vsize: Math.ceil(toNumber(d) / 4), from: 'weight', stated: whole(d), at }),
  },
  {
    pattern: new RegExp(`${NUM}\\s*bytes?\\b`, 'g'),
    read: (d, q, at) => q.sizes.push({ vsize: whole(d), from: 'bytes', stated: whole(d), at }),
  },
  {
    pattern: new RegExp(`${NUM}\\s*(?:btc|bitcoins?)\\b`, 'g'),
    read: (d, q, at) => q.amounts.push({ sats: shift(d, 8).units, unit: 'BTC', value: d, at }),
  },
  {
    pattern: new RegExp(`${NUM}\\s*(?:sats?|satoshis?)\\b`, 'g'),
    read: (d, q, at) => q.amounts.push({ sats: BigInt(whole(d)), unit: 'sat', value: d, at }),
  },
  {
    pattern: new RegExp(`${NUM}\\s*(?:more\\s+|further\\s+)?(blocks?|confirmations?|confs?)\\b`, 'g'),
    read: (d, q, _at, m) =>
      q.blocks.push({
        count: whole(d),
        noun: /^conf/.test(m[m.length - 1] ?? '') ? 'confirmation' : 'block',
      }),
  },
  {
    pattern: new RegExp(`${NUM}\\s*(minutes?|mins?|hours?|hrs?|days?)\\b`, 'g'),
    read: (d, q, _at, m) => {
      const unit = m[m.length - 1]!;
      q.minutes.push(toNumber(d) * (unit.startsWith('d') ? 1440 : unit.startsWith('h') ? 60 : 1));
    },
  },
  {
    pattern: new RegExp(`\\b(?:block|height)\\s*(?:#|height\\s+|number\\s+|no\\.?\\s*)?${NUM}`, 'g'),
    read: (d, q) => {
      if (d.scale === 0) q.heights.push(Number(d.units));
    },
  },
];

/** "1,000,000" → "1000000" (thousands separators only, never a list such as "141, 2.5"). */
const ungroup = (text: string) =>
  text.replace(/\b(\d{1,3})((?:,\d{3})+)(?![\d,])/g, (_, a, b) => a + b.replace(/,/g, ''));

/** Reads the inputs and outputs a question describes ("2 taproot inputs and 3 outputs", "1-in 2-out"). */
function readShape(
  text: string,
  free: (start: number, end: number) => boolean,
  consume: (start: number, end: number) => void,
): TransactionShape | undefined {
  const global = typeNear(text) ?? 'p2wpkh';
  const globalOutput: OutputType = global === 'p2sh-p2wpkh' ? 'p2sh' : global;
  let inputs: TransactionShape['inputs'] = [];
  let outputs: TransactionShape['outputs'] = [];
  const compact = /(\d+)\s*-?\s*in(?:puts?)?\s*[-,/ ]\s*(\d+)\s*-?\s*out(?:puts?)?\b/.exec(text);
  if (compact) {
    inputs = [{ type: global, count: Number(compact[1]) }];
    outputs = [{ type: globalOutput, count: Number(compact[2]) }];
    consume(compact.index, compact.index + compact[0].length);
  }
  const typed = String.raw`(\d+)\s*(?:-\s*)?((?:p2sh-p2wpkh|p2wpkh|p2tr|p2pkh|p2wsh|p2sh|taproot|legacy|native\s+segwit|nested\s+segwit|wrapped\s+segwit|segwit|bech32)\s+)?`;
  for (const m of text.matchAll(new RegExp(`${typed}(?:inputs?|utxos?|coins?)\\b`, 'g'))) {
    if (!free(m.index, m.index + m[0].length)) continue;
    inputs.push({ type: typeNear(m[2] ?? '') ?? global, count: Number(m[1]) });
    consume(m.index, m.index + m[0].length);
  }
  for (const m of text.matchAll(new RegExp(`${typed}(?:outputs?|recipients?|payees?)\\b`, 'g'))) {
    if (!free(m.index, m.index + m[0].length)) continue;
    const word = (m[2] ?? '').trim();
    const near = typeNear(word);
    const type: OutputType = /p2wsh/.test(word)
      ? 'p2wsh'
      : /^p2sh$/.test(word) || near === 'p2sh-p2wpkh'
        ? 'p2sh'
        : (near ?? globalOutput);
    outputs.push({ type, count: Number(m[1]) });
    consume(m.index, m.index + m[0].length);
  }
  inputs = inputs.filter((i) => i.count > 0 && i.count <= 10_000);
  outputs = outputs.filter((o) => o.count > 0 && o.count <= 10_000);
  if (inputs.length === 0 && outputs.length === 0) return undefined;
  // What the question leaves out: one input; two outputs for a payment (payee and change), one for
  // a consolidation or a sweep.
  if (inputs.length === 0) inputs = [{ type: global, count: 1 }];
  if (outputs.length === 0) {
    const single = /\b(?:consolidat\w*|sweep\w*|merge\w*)\b/.test(text);
    outputs = [{ type: globalOutput, count: single ? 1 : 2 }];
  }
  return { inputs, outputs };
}

/** Every quantity a question states. */
export function readQuantities(question: string): Quantities {
  const text = ungroup(question.toLowerCase()).replace(/\b(?:a|one)\s+(bitcoin|btc)\b/g, '1 $1');
  const q: Quantities = { text, rates: [], sizes: [], amounts: [], blocks: [], minutes: [], heights: [] };
  const taken: [number, number][] = [];
  const free = (start: number, end: number) => taken.every(([s, e]) => end <= s || start >= e);
  const consume = (start: number, end: number) => taken.push([start, end]);
  const shape = readShape(text, free, consume);
  if (shape) q.shape = shape;
  for (const unit of UNITS) {
    for (const m of text.matchAll(unit.pattern)) {
      const end = m.index + m[0].length;
      if (!free(m.index, end)) continue;
      const number = m.slice(1).find((g) => g !== undefined && /^\d/.test(g));
      const value = number === undefined ? undefined : parseDecimal(number);
      if (!value) continue;
      consume(m.index, end);
      unit.read(value, q, m.index, m);
    }
  }
  // "141 vB at 2.5": a bare number after "at" is a rate in sat/vB when a size is stated and no rate is.
  if (q.rates.length === 0 && (q.sizes.length > 0 || q.shape)) {
    for (const m of text.matchAll(new RegExp(`\\bat\\s+${NUM}(?![\\d.]|\\s*%)`, 'g'))) {
      const value = parseDecimal(m[1]!);
      if (!value || !free(m.index, m.index + m[0].length)) continue;
      q.rates.push({ value, unit: 'sat/vB', satVb: value, at: m.index, assumedUnit: true });
    }
  }
  // "estimatesmartfee returned 0.00012": a bare fraction beside Bitcoin Core's estimator is in its
  // unit, BTC/kvB.
  if (q.rates.length === 0 && /\bestimatesmartfee\b|btc\/kvb|\bbitcoin core\b/.test(text)) {
    for (const m of text.matchAll(/(?<![\d.])(0\.\d+)(?![\d.])/g)) {
      const value = parseDecimal(m[1]!);
      if (!value || !free(m.index, m.index + m[0].length)) continue;
      q.rates.push({ value, unit: 'BTC/kvB', satVb: shift(value, 5), at: m.index, assumedUnit: true });
    }
  }
  for (const list of [q.rates, q.sizes, q.amounts]) list.sort((a, b) => a.at - b.at);
  if (/\bhalf\s+an?\s+hour\b/.test(text)) q.minutes.push(30);
  else if (/\b(?:an|one)\s+hour\b/.test(text)) q.minutes.push(60);
  return q;
}
