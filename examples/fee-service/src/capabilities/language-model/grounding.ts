/**
 * The rule that keeps a model honest: every number in its prose must appear in the facts it was
 * given. A number in the prose is a run of digits (with optional thousands commas and decimals)
 * that is not part of a word, so names such as P2WPKH, BIP125 or x402 are not numbers. It is
 * grounded when some number of the facts, rounded to the prose number's decimals, equals it: a
 * model may write 12.3 for 12.345, never 13.
 */

const PROSE_NUMBER =
  /(?<![\p{L}\p{N}_.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\p{L}\p{N}_])|(?<![\p{L}\p{N}_.,])\d+(?:\.\d+)?(?![\p{L}\p{N}_])/gu;
const ANY_DIGITS = /\d+(?:\.\d+)?/g;
/** Hashes, addresses and digests: their digit runs are not figures and would ground almost anything. */
const IDENTIFIER = /^(?:(?:sha256:)?[0-9a-f]{40,}|bc1[02-9ac-hj-np-z]{8,}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$/i;

/** A number as written: its value and how many decimals it shows. */
export interface WrittenNumber {
  text: string;
  value: number;
  decimals: number;
}

/** The numbers a piece of prose states. */
export function numbersIn(prose: string): WrittenNumber[] {
  const out: WrittenNumber[] = [];
  for (const match of prose.matchAll(PROSE_NUMBER)) {
    // A sentence-final period is punctuation, not a decimal point ("… 12 blocks." is matched as 12).
    const text = match[0].replace(/,/g, '');
    const dot = text.indexOf('.');
    out.push({ text: match[0], value: Number(text), decimals: dot === -1 ? 0 : text.length - dot - 1 });
  }
  return out;
}

/** Every number a value holds: numeric leaves, and digit runs inside its strings (not identifiers) and keys. */
export function numbersOfFacts(value: unknown, into: Set<number> = new Set()): Set<number> {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) into.add(Math.abs(value));
  } else if (typeof value === 'bigint') {
    into.add(Number(value < 0n ? -value : value));
  } else if (typeof value === 'string') {
    if (IDENTIFIER.test(value)) return into;
    for (const m of value.matchAll(ANY_DIGITS)) into.add(Number(m[0]));
  } else if (Array.isArray(value)) {
    for (const item of value) numbersOfFacts(item, into);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      numbersOfFacts(key, into);
      numbersOfFacts(item, into);
    }
  }
  return into;
}

const roundTo = (value: number, decimals: number) => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};

/**
 * The numbers of `prose` that no fact supports. `allowed` holds the facts' numbers (see
 * {@link numbersOfFacts}); an empty answer means the prose is grounded.
 * @example ungroundedNumbers('It pays 12.3 sat/vB, 999 sats', numbersOfFacts({ rate: 12.345 })) // ['999']
 */
export function ungroundedNumbers(prose: string, allowed: ReadonlySet<number>): string[] {
  const values = [...allowed];
  const bad: string[] = [];
  for (const n of numbersIn(prose)) {
    if (allowed.has(n.value)) continue;
    if (!values.some((v) => roundTo(v, n.decimals) === n.value)) bad.push(n.text);
  }
  return bad;
}
