// Small statistics helpers: every figure in the report is a median with its min–max range.

/** A median with the range it came from. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  /** How many samples. */
  n: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length };
}

/** `p`-th percentile (0–100) of raw samples, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Formats a number with a fixed number of significant-looking decimals for tables. */
export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `median (min–max)`. */
export function fmtSpread(s: Spread, digits = 0, unit = ''): string {
  if (s.n === 0) return 'n/a';
  return `${fmt(s.median, digits)}${unit} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

/** A ratio as a percentage `median % (min–max)`. */
export function fmtRatio(s: Spread): string {
  if (s.n === 0) return 'n/a';
  const pct = (v: number) => `${(v * 100).toFixed(1)}`;
  return `${pct(s.median)} % (${pct(s.min)}–${pct(s.max)})`;
}
