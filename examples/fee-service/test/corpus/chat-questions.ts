// The corpus questions asked of the chat, each with the facts its answer must contain.
import { type CorpusQuestion, fee, rate, sats } from './world';

const TIERS = ['fastest', 'half_hour', 'hour', 'economy', 'minimum'] as const;

export const CHAT_QUESTIONS: readonly CorpusQuestion[] = [
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
