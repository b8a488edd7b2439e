import { formatInt, formatRate, formatSats, plural } from '../format';
import type { BlockFacts } from './analyze';

function duration(seconds: number): string {
  if (seconds < 0)
    return `${formatInt(-seconds)} seconds before the previous block by timestamp (miners' clocks may disagree)`;
  const minutes = Math.floor(seconds / 60);
  return minutes === 0
    ? `${plural(seconds, 'second')} after the previous block`
    : `${plural(minutes, 'minute')} ${seconds % 60} s after the previous block`;
}

/** The plain-language explanation of a block, written only from the facts. */
export function blockProse(facts: BlockFacts): string {
  const { block, fees, fee_rates_sat_vb: rates, recent, notable } = facts;
  const parts = [
    `Block ${formatInt(block.height)} was mined${block.pool ? ` by ${block.pool}` : ''} at ${block.time} with ${plural(block.tx_count, 'transaction')}, ${block.fullness_percent}% of the weight limit; it has ${plural(block.confirmations, 'confirmation')}.`,
    `Its fees total ${formatSats(fees.total_fee_sat)} on top of a subsidy of ${formatSats(fees.subsidy_sat)}: fees are ${fees.fee_share_of_reward_percent}% of the reward.`,
  ];
  if (rates) {
    parts.push(
      `Fee rates ranged from ${formatRate(rates.min)} to ${formatRate(rates.max)}, with a median of ${formatRate(rates.p50)} (10th percentile ${formatRate(rates.p10)}, 90th ${formatRate(rates.p90)}).`,
    );
  }
  if (facts.inclusion) {
    const { full, entry_rate_sat_vb: entry } = facts.inclusion;
    parts.push(
      full
        ? `It was full: its 10th-percentile rate, ${formatRate(entry)}, stands for its lowest included rate — a rate at or above it would have been included.`
        : `It had room, so every rate meeting the relay minimum of ${formatRate(entry)} would have been included.`,
    );
  }
  if (recent) {
    const word = { higher: 'higher than', in_line: 'in line with', lower: 'lower than' }[recent.comparison];
    parts.push(
      `That median is ${word} the ${plural(recent.blocks, 'block')} before it (their median ${formatRate(recent.median_p50_sat_vb)}).`,
    );
  }
  if (facts.time_since_previous_seconds !== null)
    parts.push(`It came ${duration(facts.time_since_previous_seconds)}.`);
  if (notable?.highest_fee) {
    parts.push(
      `The largest fee was ${formatSats(notable.highest_fee.fee)} (transaction ${notable.highest_fee.txid.slice(0, 16)}…, ${formatRate(notable.highest_fee.fee_rate_sat_vb)}).`,
    );
  }
  return parts.join(' ');
}
