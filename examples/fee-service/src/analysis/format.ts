/** Plain-language formatting shared by the deterministic prose of every explainer. */

/** 1234567 → "1,234,567". */
export function formatInt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A sat/vB rate with at most three decimals: 12.5 → "12.5 sat/vB". */
export function formatRate(rate: number): string {
  return `${Number(rate.toFixed(3))} sat/vB`;
}

/** Whole sats: "12,345 sats" (singular for one). */
export function formatSats(sats: number): string {
  return `${formatInt(sats)} ${sats === 1 ? 'sat' : 'sats'}`;
}

/** A count with its noun: plural(3, 'input') → "3 inputs". */
export function plural(count: number, noun: string, pluralNoun = `${noun}s`): string {
  return `${formatInt(count)} ${count === 1 ? noun : pluralNoun}`;
}

const KIND_NAMES: Record<string, string> = {
  p2pkh: 'P2PKH (legacy)',
  p2sh: 'P2SH',
  'p2sh-p2wpkh': 'P2SH-wrapped P2WPKH',
  'p2sh-p2wsh': 'P2SH-wrapped P2WSH',
  p2wpkh: 'P2WPKH (native SegWit)',
  p2wsh: 'P2WSH (SegWit script)',
  p2tr: 'P2TR (Taproot)',
  p2pk: 'P2PK (bare public key)',
  multisig: 'bare multisig',
  op_return: 'OP_RETURN (data, unspendable)',
  anchor: 'P2A anchor',
  coinbase: 'coinbase',
  unknown: 'unknown script',
};

/** A human name for a script kind. */
export function kindName(kind: string): string {
  return KIND_NAMES[kind] ?? kind;
}

/** "P2WPKH ×2, P2TR" from a count map. */
export function kindList(counts: Partial<Record<string, number>>): string {
  return Object.entries(counts)
    .map(([kind, count]) => (count && count > 1 ? `${count} ${kindName(kind)}` : kindName(kind)))
    .join(', ');
}
