/**
 * Exact decimals for the figures a client types: `2.5` sat/vB times 141 vB is 352.5 exactly, so
 * the fee rounds up to 353 sats with no float in between, and 0.00002 BTC/kvB is 2 sat/vB by a
 * shift of the decimal point, not a multiplication. A value is `units / 10^scale`.
 */
export interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL_TEXT = /^(\d+)(?:\.(\d+))?$/;
/** More decimals than anyone quotes a fee rate or an amount with; longer inputs are refused. */
export const MAX_DECIMALS = 12;

/** Parses a plain non-negative decimal ("2.5", "0.00002", "141"); undefined when it is not one. */
export function parseDecimal(text: string): Decimal | undefined {
  const match = DECIMAL_TEXT.exec(text.trim());
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  if (fraction.length > MAX_DECIMALS || match[1]!.length > 18) return undefined;
  return normalise({ units: BigInt(match[1]! + fraction), scale: fraction.length });
}

/** The same value with no trailing zero in its fraction. */
function normalise(d: Decimal): Decimal {
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return { units, scale };
}

/** An integer as a decimal. */
export const fromInteger = (n: number | bigint): Decimal => ({ units: BigInt(n), scale: 0 });

/** `d × 10^places`: a unit conversion by a power of ten, exact in both directions. */
export function shift(d: Decimal, places: number): Decimal {
  if (places >= 0) {
    const move = Math.min(places, d.scale);
    return normalise({ units: d.units * 10n ** BigInt(places - move), scale: d.scale - move });
  }
  return normalise({ units: d.units, scale: d.scale - places });
}

/** `d × n` for a whole number n. */
export const times = (d: Decimal, n: number | bigint): Decimal =>
  normalise({ units: d.units * BigInt(n), scale: d.scale });

/** `d / n` for a whole number n whose only prime factors are 2 and 5 (so the result is exact). */
export function dividedBy(d: Decimal, n: 2 | 4 | 5 | 8 | 10): Decimal {
  // n divides 10^3, so multiplying by 1000 / n and shifting three places is exact.
  return shift(times(d, 1000 / n), -3);
}

/** The smallest whole number at or above `d` (a fee rounds up to whole sats). */
export function ceil(d: Decimal): bigint {
  const base = 10n ** BigInt(d.scale);
  return (d.units + base - 1n) / base;
}

/** `d` as a JSON number (for facts); exact for the magnitudes used here. */
export const toNumber = (d: Decimal): number => Number(toPlain(d));

/** "0.00002", "352.5", "353": the decimal with no exponent and no trailing zero. */
export function toPlain(d: Decimal): string {
  const digits = d.units.toString().padStart(d.scale + 1, '0');
  if (d.scale === 0) return digits;
  return `${digits.slice(0, -d.scale)}.${digits.slice(-d.scale)}`;
}

/** Like {@link toPlain} with thousands separators in the whole part: "1,234,567.5". */
export function toGrouped(d: Decimal): string {
  const [whole, fraction] = toPlain(d).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** Compares two decimals: negative, zero or positive. */
export function compare(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = a.units * 10n ** BigInt(scale - a.scale);
  const y = b.units * 10n ** BigInt(scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A JSON number (a live rate with at most three decimals) as an exact decimal. */
export function fromRate(rate: number): Decimal {
  return normalise({ units: BigInt(Math.round(rate * 1000)), scale: 3 });
}
