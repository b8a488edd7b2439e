// The corpus questions asked of the analyst, each with the facts its answer must contain.
import { type CorpusQuestion, fee, rate, sats, type World } from './world';

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

export const ANALYST_QUESTIONS: readonly CorpusQuestion[] = [
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
