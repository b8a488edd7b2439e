/**
 * The words of `context` that steer fee advice. A request's explicit `urgency` always wins; among
 * context words the most urgent wins (an "urgent consolidation" is urgent). Size words change the
 * assumed transaction size. Every other word is ignored and listed back as unrecognised. The table
 * is published in the documentation (docs/fee-service.md, "AI resources").
 */

export const URGENCIES = ['low', 'medium', 'high'] as const;
export type Urgency = (typeof URGENCIES)[number];

/** Confirmation horizon in blocks for each urgency (none given = medium). */
export const URGENCY_HORIZON_BLOCKS: Readonly<Record<Urgency, number>> = { low: 144, medium: 6, high: 1 };

export const URGENCY_WORDS: Readonly<Record<Urgency, readonly string[]>> = {
  low: [
    'consolidation',
    'consolidate',
    'consolidating',
    'sweep',
    'utxo',
    'utxos',
    'savings',
    'cold',
    'whenever',
    'later',
    'patient',
  ],
  medium: [
    'payment',
    'pay',
    'purchase',
    'invoice',
    'merchant',
    'salary',
    'payroll',
    'withdrawal',
    'transfer',
  ],
  high: [
    'urgent',
    'asap',
    'immediately',
    'deadline',
    'now',
    'deposit',
    'liquidation',
    'lightning',
    'channel',
    'htlc',
    'stuck',
    'bump',
    'cpfp',
  ],
};

/**
 * Typical sizes of a one-input, two-output transaction by script type, vB (worked out from the
 * serialization with 72-byte ECDSA or 64-byte Schnorr signatures): P2WPKH 141, P2TR 154,
 * P2PKH 226.
 */
export const SIZE_WORDS: Readonly<Record<string, { vsize: number; profile: string }>> = {
  segwit: { vsize: 141, profile: 'p2wpkh' },
  p2wpkh: { vsize: 141, profile: 'p2wpkh' },
  bech32: { vsize: 141, profile: 'p2wpkh' },
  taproot: { vsize: 154, profile: 'p2tr' },
  p2tr: { vsize: 154, profile: 'p2tr' },
  legacy: { vsize: 226, profile: 'p2pkh' },
  p2pkh: { vsize: 226, profile: 'p2pkh' },
};
/** The size assumed when no size word is given: a one-input, two-output P2WPKH payment. */
export const DEFAULT_VSIZE = 141;

export interface ContextReading {
  /** The urgency the context implies, if any of its words says one. */
  urgency: Urgency | null;
  vsize: number;
  profile: string;
  recognised: string[];
  unrecognised: string[];
}

const RANK: Record<Urgency, number> = { low: 0, medium: 1, high: 2 };

/** Reads `context` word by word (case-insensitive, letters and digits only). */
export function readContext(context: string | undefined): ContextReading {
  const words = (context ?? '').toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const reading: ContextReading = {
    urgency: null,
    vsize: DEFAULT_VSIZE,
    profile: 'p2wpkh',
    recognised: [],
    unrecognised: [],
  };
  for (const word of words) {
    const urgency = URGENCIES.find((u) => URGENCY_WORDS[u].includes(word));
    const size = SIZE_WORDS[word];
    if (urgency) {
      if (reading.urgency === null || RANK[urgency] > RANK[reading.urgency]) reading.urgency = urgency;
    } else if (size) {
      reading.vsize = size.vsize;
      reading.profile = size.profile;
    } else {
      if (!reading.unrecognised.includes(word)) reading.unrecognised.push(word);
      continue;
    }
    if (!reading.recognised.includes(word)) reading.recognised.push(word);
  }
  return reading;
}
