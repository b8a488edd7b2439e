// The question corpus: questions a Bitcoin fee practitioner asks the chat and the analyst, each
// with the facts its answer must contain. Facts are either fixed (worked out by hand: 2.5 × 141 =
// 352.5, so 353 sats) or computed here from what the service's other resources report on the same
// market (the free preview's tiers, the paid decision, next block, landscape and scoreboard), so a
// wrong answer — one that does not compute, rounds down, names the wrong estimator, answers only
// one step or says "1 blocks" — misses at least one of them.

/** The market a corpus question is asked in, read from the service's own resources. */
export interface World {
  scenario: 'calm' | 'backlog';
  /** The free preview's tiers (the snapshot every AI answer cites). */
  tiers: { fastest: number; half_hour: number; hour: number; economy: number; minimum: number };
  mempool: { vsize: number; projected_block_count: number };
  /** The paid decision (GET /api/v1/fees/now). */
  decision: { decision: 'send' | 'wait'; savings_sat_vb: number; savings_percent: number };
  /** The chain tip (the simulator's). */
  tip: { height: number; fullness_percent: number };
  /** The paid next block (GET /api/v1/mining/nextblock). */
  nextBlock: { height: number; entry: number; p50: number };
  /** The paid landscape (GET /api/v1/fees/landscape). */
  landscape: { direction: string; environment: string };
  /** The paid scoreboard's first-ranked row per horizon over 168 hours. */
  best: Record<number, { source: string; hit_percent: number; n: number }>;
  /** An unconfirmed transaction, the lowest-paying one found, with its size and fee (the simulator's). */
  lowTx: { txid: string; vsize: number; fee: number };
}

export interface CorpusQuestion {
  id: string;
  resource: 'chat' | 'analyst';
  /** The question; `{LOW_TX}` and `{TIP}` are filled from the world. */
  q: string;
  /** Scenarios it is asked in (default: calm for the chat, both for the analyst). */
  scenarios?: World['scenario'][];
  /** What must be in the answer's prose. */
  facts: (w: World) => string[];
  /** What must not be (a wrong plural, a figure it must not compute). */
  absent?: (w: World) => string[];
  /** Chat: the calculations it must run. Analyst: the intent it answers and the action it advises. */
  kinds?: string[];
  intent?: string;
  action?: (w: World) => string;
}

/** "12.5 sat/vB" with at most three decimals, as the service writes rates. */
export const rate = (x: number) => `${Number(x.toFixed(3))} sat/vB`;
/** "1,234 sats" (one sat singular). */
export const sats = (n: number) => `${n.toLocaleString('en-US')} ${n === 1 ? 'sat' : 'sats'}`;
/** Fee in whole sats for a rate and a size, rounded up, from milli-sats (no float product). */
export const fee = (r: number, vsize: number) => Math.ceil((Math.round(r * 1000) * vsize) / 1000);
const TIERS = ['fastest', 'half_hour', 'hour', 'economy', 'minimum'] as const;

const chat: CorpusQuestion[] = [
  {
    id: 'fee-size-rate',
    resource: 'chat',
    q: 'What is the fee for 141 vB at 2.5 sat/vB?',
    kinds: ['fee_for_size'],
    facts: () => ['353 sats', '2.5 × 141 = 352.5, rounded up'],
    absent: () => ['352 sats'],
  },
  {
    id: 'fee-bare-rate',
    resource: 'chat',
    q: 'fee for 141 vbytes at 2.5',
    kinds: ['fee_for_size'],
    facts: () => ['353 sats', '2.5 was read as a rate in sat/vB'],
  },
  {
    id: 'fee-sub-sat',
    resource: 'chat',
    q: 'How much is a 141 vB transaction at 0.25 sat/vB?',
    kinds: ['fee_for_size'],
    facts: () => ['36 sats', '35.25'],
  },
  {
    id: 'fee-two-rates',
    resource: 'chat',
    q: 'Compare the fee for 250 vB at 3 sat/vB and at 12.5 sat/vB',
    kinds: ['fee_for_size'],
    facts: () => ['750 sats at 3 sat/vB', '3,125 sats at 12.5 sat/vB'],
  },
  {
    id: 'fee-from-weight',
    resource: 'chat',
    q: 'What does a transaction of weight 561 WU cost at 4 sat/vB?',
    kinds: ['fee_for_size'],
    facts: () => ['weight 561 WU, which is 141 vB', '564 sats'],
  },
  {
    id: 'fee-taproot-shape',
    resource: 'chat',
    q: 'How much does a 2-input 2-output taproot transaction cost at 10 sat/vB?',
    kinds: ['fee_for_size'],
    facts: () => ['2 P2TR inputs and 2 P2TR outputs (about 212 vB)', '2,120 sats'],
  },
  {
    id: 'fee-consolidation',
    resource: 'chat',
    q: 'What will it cost to consolidate 20 UTXOs at 2 sat/vB?',
    kinds: ['fee_for_size'],
    facts: () => ['20 P2WPKH inputs and 1 P2WPKH output (about 1,402 vB)', '2,804 sats'],
  },
  {
    id: 'fee-share-of-amount',
    resource: 'chat',
    q: 'What fee will I pay to send 0.001 BTC at 10 sat/vB?',
    kinds: ['fee_for_size'],
    facts: () => ['1,410 sats', '1.41% of the 100,000 sats sent'],
  },
  {
    id: 'fee-at-live-tiers',
    resource: 'chat',
    q: 'How much does a 141 vB transaction cost right now?',
    scenarios: ['calm', 'backlog'],
    kinds: ['fee_for_size'],
    facts: (w) => [
      `${sats(fee(w.tiers.fastest, 141))} at the fastest (next block) rate of ${rate(w.tiers.fastest)}`,
      `${sats(fee(w.tiers.hour, 141))} at the hour (about 6 blocks) rate of ${rate(w.tiers.hour)}`,
      `${sats(fee(w.tiers.economy, 141))} at the economy rate of ${rate(w.tiers.economy)}`,
    ],
  },
  {
    id: 'rate-of-fee',
    resource: 'chat',
    q: 'I paid 500 sats for a 141 vB transaction, what rate is that?',
    scenarios: ['calm', 'backlog'],
    kinds: ['rate_of_fee'],
    facts: (w) => {
      // 500 / 141 = 3.5460… → 3.546; the highest tier it meets.
      const met = TIERS.find((t) => 3.546 >= w.tiers[t]);
      return [
        'is 3.546 sat/vB',
        met ? `meets today's ${met.replace('_', ' ')} tier (${rate(w.tiers[met])}` : 'below today',
      ];
    },
  },
  {
    id: 'rate-units-from-core',
    resource: 'chat',
    q: 'Convert 0.00012 BTC/kvB to sat/vB',
    kinds: ['rate_units'],
    facts: () => ['0.00012 BTC/kvB = 12 sat/vB', '12,000 sat/kvB', '3 sat/WU'],
  },
  {
    id: 'rate-units-to-core',
    resource: 'chat',
    q: 'What is 2.5 sat/vB in BTC/kvB?',
    kinds: ['rate_units'],
    facts: () => ['2.5 sat/vB = 0.000025 BTC/kvB', '2,500 sat/kvB', '0.625 sat/WU'],
  },
  {
    id: 'vsize-of-weight',
    resource: 'chat',
    q: 'What is the vsize of a transaction with weight 565?',
    kinds: ['vsize'],
    facts: () => ['141.25 vbytes, rounded up to 142 vB'],
  },
  {
    id: 'weight-of-vsize',
    resource: 'chat',
    q: 'What weight is a 141 vB transaction?',
    kinds: ['vsize'],
    facts: () => ['141 vB is a weight of 561 to 564 WU'],
  },
  {
    id: 'btc-to-sats',
    resource: 'chat',
    q: 'How many sats is 0.015 BTC?',
    kinds: ['amount_units'],
    facts: () => ['0.015 BTC is 1,500,000 sats'],
  },
  {
    id: 'sats-to-btc',
    resource: 'chat',
    q: 'How much is 250,000 sats in BTC?',
    kinds: ['amount_units'],
    facts: () => ['250,000 sats is 0.0025 BTC'],
  },
  {
    id: 'dust',
    resource: 'chat',
    q: 'Is a 300 sat output dust?',
    kinds: ['dust'],
    facts: () => ['P2PKH 546', 'P2WPKH 294', 'dust as P2PKH, P2SH, P2WSH, P2TR, not as P2WPKH'],
  },
  {
    id: 'confirmations-time',
    resource: 'chat',
    q: 'How long do 6 confirmations take?',
    kinds: ['block_time'],
    // Erlang(6, 10 min): mean 60, median 56.7, 90th percentile 92.8 minutes.
    facts: () => ['6 confirmations take 1 hour on average', 'within 57 minutes', 'within 1 hour 33 minutes'],
  },
  {
    id: 'block-chance',
    resource: 'chat',
    q: 'What is the chance of a block within 30 minutes?',
    kinds: ['block_time'],
    // 1 − e^−3 = 0.9502
    facts: () => ['In 30 minutes 3 blocks are expected', 'at least 1 block: 95%'],
  },
  {
    id: 'next-block-wait',
    resource: 'chat',
    q: 'How long until the next block?',
    kinds: ['block_time'],
    // Exponential: median 10 ln 2 = 6.9, 90th percentile 10 ln 10 = 23.0 minutes.
    facts: () => ['The next block takes 10 minutes on average', 'within 7 minutes', 'within 23 minutes'],
  },
  {
    id: 'next-block-rate',
    resource: 'chat',
    q: 'What fee rate gets me into the next block now?',
    scenarios: ['calm', 'backlog'],
    kinds: ['next_block_rate'],
    facts: (w) => [
      `the fastest tier quotes ${rate(w.tiers.fastest)}`,
      `${sats(fee(w.tiers.fastest, 141))} at the fastest tier`,
    ],
  },
  {
    id: 'rate-for-horizon',
    resource: 'chat',
    q: 'What rate should I use to confirm within 6 blocks?',
    scenarios: ['calm', 'backlog'],
    kinds: ['target_rate'],
    facts: (w) => [
      `the hour tier (a 6-block target) quotes ${rate(w.tiers.hour)}`,
      `${sats(fee(w.tiers.hour, 141))} for a typical 141 vB payment`,
    ],
  },
  {
    id: 'subsidy-at-height',
    resource: 'chat',
    q: 'What is the block subsidy at height 840,000?',
    kinds: ['subsidy'],
    facts: () => [
      '3.125 BTC (312,500,000 sats)',
      'halved 4 times',
      'block 1,050,000, 210,000 blocks away',
      '1.5625 BTC',
    ],
  },
  {
    id: 'next-halving',
    resource: 'chat',
    q: 'When is the next halving?',
    kinds: ['subsidy'],
    facts: (w) => [
      `The next block, ${(w.tip.height + 1).toLocaleString('en-US')}`,
      `${(1_050_000 - w.tip.height - 1).toLocaleString('en-US')} blocks away`,
    ],
  },
  {
    id: 'rbf-or-cpfp',
    resource: 'chat',
    q: 'RBF or CPFP?',
    scenarios: ['calm', 'backlog'],
    kinds: ['bump'],
    facts: (w) => {
      const { fastest, minimum } = w.tiers;
      const both = ['RBF', 'CPFP', 'Only the sender can replace', 'CPFP needs an output you control'];
      if (minimum >= fastest) return [...both, "At today's rates nothing needs bumping"];
      // A typical 141 vB payment at the minimum tier, lifted to the fastest tier by each way.
      const paid = fee(minimum, 141);
      const replacement = Math.max(fee(fastest, 141), paid + 141);
      const child = fee(fastest, 141 + 110) - paid;
      return [
        ...both,
        `a version paying ${sats(replacement)}, ${sats(replacement - paid)} more`,
        `a 110 vB child paying ${sats(child)}`,
      ];
    },
  },
  {
    id: 'bump-stated',
    resource: 'chat',
    q: 'My 200 vB transaction pays 2 sat/vB. Bump it to 15 sat/vB: RBF or CPFP?',
    kinds: ['bump'],
    // RBF: 15 × 200 = 3,000 (400 + 200 by the increment rule is less): 2,600 more.
    // CPFP: 15 × 310 − 400 = 4,250.
    facts: () => [
      'paying 3,000 sats, 2,600 sats more',
      'child paying 4,250 sats',
      'RBF is cheaper by 1,650 sats',
    ],
  },
  {
    id: 'mempool-size',
    resource: 'chat',
    q: 'How big is the mempool right now?',
    scenarios: ['calm', 'backlog'],
    kinds: [],
    facts: (w) => {
      const n = w.mempool.projected_block_count;
      return [
        `${w.mempool.vsize.toLocaleString('en-US')} vB or ${n === 1 ? "1 block's worth" : `${n} blocks' worth`}`,
      ];
    },
    absent: () => ['1 blocks'],
  },
];

/** The decision's first words, the paid decision's verdict. */
const timing = (w: World) => {
  const economy = `the economy tier (${rate(w.tiers.economy)}, ${sats(fee(w.tiers.economy, 141))} for 141 vB)`;
  return w.decision.decision === 'send'
    ? `Send now: waiting for ${economy} would save only ${rate(w.decision.savings_sat_vb)} (${w.decision.savings_percent}% of the fastest rate`
    : `Wait if the payment can take hours: ${economy} saves ${rate(w.decision.savings_sat_vb)} (${w.decision.savings_percent}% of the fastest rate`;
};
const entry = (w: World) =>
  `The next block (height ${w.nextBlock.height.toLocaleString('en-US')}) takes ${rate(w.nextBlock.entry)} now`;
const trusted = (w: World, target: number) => {
  const b = w.best[target];
  return b
    ? `for ${target} ${target === 1 ? 'block' : 'blocks'} ${b.source} (${b.hit_percent}% of ${b.n} estimates hit`
    : 'no scored estimates';
};

const analyst: CorpusQuestion[] = [
  {
    id: 'analyst-send-now',
    resource: 'analyst',
    q: 'Should I send now?',
    intent: 'send_timing',
    action: (w) => w.decision.decision,
    facts: (w) => [
      timing(w),
      `${entry(w)}, ${sats(fee(w.nextBlock.entry, 141))} for 141 vB`,
      `the hour tier quotes ${rate(w.tiers.hour)}`,
      trusted(w, 1),
      trusted(w, 6),
      `Block median rates are ${w.landscape.direction}`,
      'Caveats: Rates are estimates',
    ],
  },
  {
    id: 'analyst-how-much',
    resource: 'analyst',
    q: 'How much should I pay to send 0.05 BTC?',
    intent: 'what_to_pay',
    facts: (w) => [
      `${entry(w)}, ${sats(fee(w.nextBlock.entry, 141))} for 141 vB`,
      `the hour tier quotes ${rate(w.tiers.hour)}, ${sats(fee(w.tiers.hour, 141))} for 141 vB (`,
      'of the amount sent',
      trusted(w, 1),
      timing(w),
    ],
  },
  {
    id: 'analyst-trust',
    resource: 'analyst',
    q: 'Which fee estimator can I trust?',
    intent: 'estimators',
    facts: (w) => [trusted(w, 1), trusted(w, 6), entry(w), `Block median rates are ${w.landscape.direction}`],
  },
  {
    id: 'analyst-next-block',
    resource: 'analyst',
    q: 'What will the next block look like?',
    intent: 'next_block',
    facts: (w) => [
      entry(w),
      `its median rate is ${rate(w.nextBlock.p50)}`,
      '63.2% chance',
      trusted(w, 1),
      timing(w),
    ],
  },
  {
    id: 'analyst-stuck',
    resource: 'analyst',
    q: 'Why is {LOW_TX} stuck?',
    intent: 'stuck_transaction',
    action: (w) => (w.lowTx.fee / w.lowTx.vsize >= w.nextBlock.entry ? 'nothing_to_do' : 'bump'),
    facts: (w) => {
      const id = `Transaction ${w.lowTx.txid.slice(0, 16)}… is unconfirmed`;
      if (w.lowTx.fee / w.lowTx.vsize >= w.nextBlock.entry)
        return [id, `at or above the next block's entry rate of ${rate(w.nextBlock.entry)}`];
      // RBF to the entry rate: at least the entry rate on its size, and the old fee plus 1 sat/vB on it.
      const replacement = Math.max(fee(w.nextBlock.entry, w.lowTx.vsize), w.lowTx.fee + w.lowTx.vsize);
      const child = fee(w.nextBlock.entry, w.lowTx.vsize + 110) - w.lowTx.fee;
      return [
        id,
        `below the next block's entry rate of ${rate(w.nextBlock.entry)}: bump it`,
        `to the entry rate, ${rate(w.nextBlock.entry)}: RBF ${sats(replacement - w.lowTx.fee)} more (a replacement paying ${sats(replacement)}), or CPFP a 110 vB child paying ${sats(child)}`,
      ];
    },
  },
  {
    id: 'analyst-block',
    resource: 'analyst',
    q: 'Tell me about block {TIP}',
    intent: 'block',
    facts: (w) => [
      `Block ${w.tip.height.toLocaleString('en-US')} was ${w.tip.fullness_percent}% full`,
      `The next block takes ${rate(w.nextBlock.entry)} now`,
      `Block median rates are ${w.landscape.direction}`,
    ],
  },
  {
    id: 'analyst-overview',
    resource: 'analyst',
    q: 'Give me the full picture of the fee environment',
    intent: 'overview',
    facts: (w) => [`the environment is ${w.landscape.environment}`, timing(w), trusted(w, 1)],
  },
  {
    id: 'analyst-consolidate',
    resource: 'analyst',
    q: 'Is it a good time to consolidate my UTXOs?',
    intent: 'what_to_pay',
    facts: (w) => [
      `to confirm within 144 blocks the economy tier quotes ${rate(w.tiers.economy)}, ${sats(fee(w.tiers.economy, 141))}`,
      entry(w),
      timing(w),
    ],
  },
];

export const CORPUS: readonly CorpusQuestion[] = [...chat, ...analyst];
