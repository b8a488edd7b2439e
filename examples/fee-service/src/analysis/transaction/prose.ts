import { formatInt, formatRate, formatSats, kindList, plural } from '../format';
import type { TransactionFacts } from './analyze';

const TIER_WORDS: Record<string, string> = {
  fastest: 'the fastest tier (next block)',
  half_hour: 'the half-hour tier',
  hour: 'the hour tier',
  economy: 'the economy tier',
  minimum: 'only the minimum tier',
  below_minimum: 'none of the tiers, below the minimum',
};

function feeSentence(facts: TransactionFacts): string {
  const { fee, market, transaction } = facts;
  if (transaction.coinbase)
    return 'It is a coinbase transaction: it creates the block reward and pays no fee.';
  if (!fee) return 'Its fee is unknown because the upstream did not report every spent output.';
  let text = `It pays ${formatSats(fee.fee_sat)} for ${formatInt(transaction.vsize)} vB, ${formatRate(fee.fee_rate_sat_vb)}`;
  if (!market) return `${text}.`;
  text += `, which meets ${TIER_WORDS[market.tier_met]}.`;
  if (market.reference === 'next_block_now') {
    text += market.would_be_included_next_block
      ? ` The next block's entry rate is ${formatRate(market.next_block_floor_sat_vb)} now, so as projected it would be included in the next block`
      : ` The next block's entry rate is ${formatRate(market.next_block_floor_sat_vb)} now, so as projected it would not be included in the next block yet`;
    text +=
      market.overpaid_sat > 0
        ? `, paying ${formatSats(market.overpaid_sat)} more than a fee at that rate.`
        : '.';
  } else if (market.block_entry_rate_sat_vb !== null) {
    const block =
      market.block_full === null
        ? `its block's fullness is unknown, so its 10th-percentile rate, ${formatRate(market.block_entry_rate_sat_vb)}, stands for its entry rate`
        : market.block_full
          ? `its block was full: its 10th-percentile rate, ${formatRate(market.block_entry_rate_sat_vb)}, stands for its lowest included rate`
          : `its block had room, so any rate meeting the relay minimum of ${formatRate(market.block_entry_rate_sat_vb)} would have been included`;
    text += ` By the rule the observatory judges by, ${block}`;
    text +=
      market.overpaid_sat > 0
        ? `; it paid about ${formatSats(market.overpaid_sat)} more than a fee at that rate.`
        : '.';
  }
  return text;
}

function statusSentence(facts: TransactionFacts): string {
  const { status, rbf } = facts;
  if (status.confirmed) {
    return `It is confirmed in block ${status.block_height ?? 'unknown'} with ${plural(status.confirmations, 'confirmation')}.`;
  }
  const replace = rbf.signals_bip125
    ? 'it signals replace-by-fee (BIP 125), so its sender can bump the fee'
    : rbf.truc_v3
      ? 'as a version 3 (TRUC) transaction it is replaceable'
      : 'it does not signal BIP 125, though nodes running full-RBF policy may still accept a replacement';
  return `It is unconfirmed; ${replace}.`;
}

/** The plain-language explanation, written only from the facts. */
export function transactionProse(facts: TransactionFacts): string {
  const { transaction, script_types } = facts;
  const parts = [
    `Transaction ${transaction.txid.slice(0, 16)}… spends ${plural(transaction.input_count, 'input')} (${kindList(script_types.inputs)}) into ${plural(transaction.output_count, 'output')} (${kindList(script_types.outputs)}).`,
    feeSentence(facts),
    statusSentence(facts),
  ];
  if (facts.cpfp) {
    parts.push(
      `With its ${plural(facts.cpfp.ancestors.length, 'unconfirmed parent')} and ${plural(facts.cpfp.descendants.length, 'child', 'children')} the package pays ${formatRate(facts.cpfp.package_fee_rate_sat_vb)}.`,
    );
  }
  for (const h of facts.heuristics) {
    const name =
      h.label === 'likely_change'
        ? `output ${h.output} looks like change`
        : `it looks like a ${h.label.replace(/_/g, ' ')}`;
    parts.push(`Heuristic, not fact: ${name} (confidence ${h.confidence}; ${h.rule}).`);
  }
  if (!facts.consistency.agrees) {
    parts.push(
      'The upstream reported a different fee or weight than the one measured here from the raw bytes.',
    );
  }
  return parts.join(' ');
}
