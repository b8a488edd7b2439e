import { formatRate, formatSats, plural } from '../format';
import type { AdviceFacts } from './analyze';

/** The plain-language advice, written only from the facts. */
export function adviceProse(facts: AdviceFacts): string {
  const parts: string[] = [];
  const why =
    facts.urgency_from === 'context'
      ? ` (from your context: ${facts.context?.recognised.join(', ')})`
      : facts.urgency_from === 'default'
        ? ' (no urgency given)'
        : '';
  parts.push(
    `For ${facts.urgency} urgency${why} the horizon is ${plural(facts.horizon_blocks, 'block')}: use ${formatRate(facts.recommended_fee_rate_sat_vb)}, about ${formatSats(facts.fee_sat)} for a ${facts.assumed_vsize} vB ${facts.size_profile.toUpperCase()} transaction.`,
  );
  if (facts.decision === 'wait' && facts.savings.by_deferring_sat !== null) {
    parts.push(
      `Consider waiting: recent blocks would have included ${formatRate(facts.recent_floor_sat_vb ?? 0)} (their median entry rate), so deferring could save about ${formatSats(facts.savings.by_deferring_sat)}; fees can also rise while you wait.`,
    );
  } else {
    parts.push(`Send now.`);
  }
  if (facts.savings.vs_next_block_sat > 0) {
    parts.push(
      `Paying for the next block would cost ${formatSats(facts.next_block_fee_sat)}, so this horizon saves ${formatSats(facts.savings.vs_next_block_sat)} (${facts.savings.vs_next_block_percent}%).`,
    );
  }
  if (facts.amount) {
    parts.push(
      `The fee is ${facts.amount.fee_share_percent}% of the ${formatSats(facts.amount.amount_sat)} you send.`,
    );
    if (facts.warnings.includes('fee_exceeds_amount'))
      parts.push('Warning: the fee is larger than the amount itself.');
    else if (facts.warnings.includes('fee_above_1_percent_of_amount'))
      parts.push('Warning: that is more than 1% of the amount.');
  }
  if (facts.warnings.includes('tier_rarely_included')) {
    parts.push(`Caution: ${facts.reason}.`);
  }
  parts.push(
    facts.confidence.level === 'unknown'
      ? `Confidence: no observatory evidence for this horizon yet.`
      : `Confidence ${facts.confidence.level}: ${facts.confidence.source}'s quotes for this horizon would have been included within ${plural(facts.horizon_blocks, 'block')} ${Math.round(facts.confidence.hit_rate * 100)}% of the time over ${facts.confidence.n} judged estimates (last ${facts.confidence.window_hours} h).`,
  );
  return parts.join(' ');
}
