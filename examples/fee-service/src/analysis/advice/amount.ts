/** Sats in one bitcoin. */
export const SATS_PER_BTC = 100_000_000;
/** No amount can exceed the 21 million bitcoin supply. */
export const MAX_AMOUNT_SAT = 21_000_000 * SATS_PER_BTC;

/**
 * Parses a decimal BTC amount ("0.015", "2") into whole sats without floating point: at most eight
 * decimals, more than zero, at most 21,000,000 BTC. Returns null for anything else.
 * @example btcToSats('0.00012345') // 12345
 */
export function btcToSats(text: string): number | null {
  const match = /^(\d{1,8})(?:\.(\d{1,8}))?$/.exec(text.trim());
  if (!match) return null;
  const sats = Number(match[1]) * SATS_PER_BTC + Number((match[2] ?? '').padEnd(8, '0'));
  return sats > 0 && sats <= MAX_AMOUNT_SAT ? sats : null;
}
