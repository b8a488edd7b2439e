import { MEANINGFUL_MIN_PERCENT, MEANINGFUL_MIN_SAT_VB } from '../../domain/constants';
import { feeForVsize, fromMilliSatPerVb, roundRate3, toMilliSatPerVb } from '../../domain/fee-math';
import { decideSendWait } from '../../domain/send-wait';
import type { TierName } from '../../domain/types';
import type { FeeMarket } from '../market';
import { type ContextReading, readContext, URGENCY_HORIZON_BLOCKS, type Urgency } from './context-words';

/** A fee above this share of the amount sent is warned about (percent). */
export const FEE_SHARE_WARNING_PERCENT = 1;
/**
 * Below this hit rate (the `low` confidence) the tier is not recommended as is: its quotes would
 * rarely have been included within the horizon, so the advice takes at least what recent blocks
 * took at the bottom.
 */
export const RELIABLE_HIT_RATE = 0.7;

/** The tier that targets each horizon (`docs/fee-rules.md#tier-targets`: 1, 6, 144 blocks). */
export const HORIZON_TIER: Readonly<Record<number, TierName>> = { 1: 'fastest', 6: 'hour', 144: 'economy' };

/**
 * How often the observatory found that this source's quotes for the horizon would have been
 * included within it (docs/fee-rules.md#would-have-been-included): its scoreboard hit rate.
 */
export interface HorizonEvidence {
  source: string;
  target: number;
  hit_rate: number;
  /** Estimates judged. */
  n: number;
  window_hours: number;
}

export interface AdviceInput {
  market: FeeMarket;
  urgency?: Urgency;
  /** Whole sats being sent. */
  amountSat?: number;
  context?: string;
  /**
   * Median entry rate of recent blocks, sat/vB: the lowest rate each would have included (its relay
   * minimum when it had room, its p10 when full).
   */
  recentFloorSatVb?: number | null;
  /** The observatory's hit rate for the tier used, when it has one. */
  evidence?: HorizonEvidence | null;
}

export interface AdviceFacts {
  urgency: Urgency;
  urgency_from: 'parameter' | 'context' | 'default';
  horizon_blocks: number;
  context: { recognised: string[]; unrecognised: string[] } | null;
  assumed_vsize: number;
  size_profile: string;
  tier_used: TierName;
  recommended_fee_rate_sat_vb: number;
  decision: 'send' | 'wait';
  reason: string;
  fee_sat: number;
  next_block_fee_sat: number;
  savings: {
    vs_next_block_sat: number;
    vs_next_block_percent: number;
    /** What deferring the broadcast until rates return to the recent floor would save (wait only). */
    by_deferring_sat: number | null;
  };
  recent_floor_sat_vb: number | null;
  amount: { amount_sat: number; fee_share_percent: number } | null;
  warnings: (
    | 'fee_exceeds_amount'
    | 'fee_above_1_percent_of_amount'
    | 'context_words_ignored'
    | 'tier_rarely_included'
  )[];
  confidence:
    | { level: 'high' | 'medium' | 'low'; hit_rate: number; n: number; source: string; window_hours: number }
    | {
        level: 'unknown';
        note: string;
      };
  market: { tiers: FeeMarket['tiers']; next_block_floor_sat_vb: number; projected_block_count: number };
  send_wait_v1: { decision: 'send' | 'wait'; reason_codes: string[] };
}

const pct2 = (num: number, den: number) => (den === 0 ? 0 : Math.round((10_000 * num) / den) / 100);

function urgencyOf(
  input: AdviceInput,
  context: ContextReading,
): { urgency: Urgency; from: AdviceFacts['urgency_from'] } {
  if (input.urgency) return { urgency: input.urgency, from: 'parameter' };
  if (context.urgency) return { urgency: context.urgency, from: 'context' };
  return { urgency: 'medium', from: 'default' };
}

function confidenceOf(evidence: HorizonEvidence | null | undefined): AdviceFacts['confidence'] {
  if (!evidence || evidence.n === 0) {
    return { level: 'unknown', note: 'no observatory evidence for this horizon yet' };
  }
  const level = evidence.hit_rate >= 0.9 ? 'high' : evidence.hit_rate >= RELIABLE_HIT_RATE ? 'medium' : 'low';
  return {
    level,
    hit_rate: evidence.hit_rate,
    n: evidence.n,
    source: evidence.source,
    window_hours: evidence.window_hours,
  };
}

/**
 * Fee advice for one payment: the horizon from the urgency (low 144, medium 6, high 1 block), the
 * tier that targets it (never below the minimum, and at least the next-block floor for one block;
 * at least the recent blocks' median entry rate when the observatory found the tier's quotes
 * rarely included — below {@link RELIABLE_HIT_RATE}), the fee at the assumed size, what the
 * horizon saves against the next block, and whether to defer: only at low urgency, when the rate
 * is meaningfully above what recent blocks would have included (the send-wait-v1 thresholds:
 * ≥ 2 sat/vB and ≥ 25 %).
 */
export function adviseFee(input: AdviceInput): AdviceFacts {
  const { market } = input;
  const context = readContext(input.context);
  const { urgency, from } = urgencyOf(input, context);
  const horizon = URGENCY_HORIZON_BLOCKS[urgency];
  const tier = HORIZON_TIER[horizon]!;
  const confidence = confidenceOf(input.evidence);
  const recentFloor = input.recentFloorSatVb ?? null;
  let rateMilli = Math.max(toMilliSatPerVb(market.tiers[tier]), toMilliSatPerVb(market.tiers.minimum));
  if (horizon === 1) rateMilli = Math.max(rateMilli, toMilliSatPerVb(market.next_block_floor_sat_vb));
  const unreliable = confidence.level === 'low';
  const tierMilli = rateMilli;
  if (unreliable && recentFloor !== null) rateMilli = Math.max(rateMilli, toMilliSatPerVb(recentFloor));
  const rate = fromMilliSatPerVb(rateMilli);
  const vsize = context.vsize;
  const fee = feeForVsize(rate, vsize);
  const nextBlockRate = Math.max(market.tiers.fastest, market.next_block_floor_sat_vb);
  const nextBlockFee = Math.max(fee, feeForVsize(nextBlockRate, vsize));
  const gapMilli = recentFloor === null ? 0 : rateMilli - toMilliSatPerVb(recentFloor);
  const defer =
    !unreliable &&
    urgency === 'low' &&
    recentFloor !== null &&
    gapMilli >= MEANINGFUL_MIN_SAT_VB * 1000 &&
    100 * gapMilli >= MEANINGFUL_MIN_PERCENT * rateMilli;
  const warnings: AdviceFacts['warnings'] = [];
  let amount: AdviceFacts['amount'] = null;
  if (input.amountSat !== undefined) {
    amount = { amount_sat: input.amountSat, fee_share_percent: pct2(fee, input.amountSat) };
    if (fee >= input.amountSat) warnings.push('fee_exceeds_amount');
    else if (amount.fee_share_percent > FEE_SHARE_WARNING_PERCENT)
      warnings.push('fee_above_1_percent_of_amount');
  }
  if (context.unrecognised.length > 0) warnings.push('context_words_ignored');
  if (unreliable) warnings.push('tier_rarely_included');
  const sendWait = decideSendWait({
    tiers: market.tiers,
    mempool: { count: market.mempool_count, vsize: market.mempool_vsize },
  });
  return {
    urgency,
    urgency_from: from,
    horizon_blocks: horizon,
    context:
      input.context === undefined
        ? null
        : { recognised: context.recognised, unrecognised: context.unrecognised },
    assumed_vsize: vsize,
    size_profile: context.profile,
    tier_used: tier,
    recommended_fee_rate_sat_vb: rate,
    decision: defer ? 'wait' : 'send',
    reason: unreliable
      ? `the ${tier.replace('_', ' ')} tier's quotes would rarely have been included within ${horizon} block${horizon === 1 ? '' : 's'}: ${
          rateMilli > tierMilli
            ? 'raised to what recent blocks would have included'
            : 'no higher rate is known to do better; expect to wait past the horizon'
        }`
      : defer
        ? 'low urgency and today’s economy rate is well above what recent blocks would have included: deferring the broadcast is likely to cost less'
        : horizon === 1
          ? 'high urgency: pay for the next block'
          : `send now at the ${tier.replace('_', ' ')} tier; it targets inclusion within ${horizon} blocks`,
    fee_sat: fee,
    next_block_fee_sat: nextBlockFee,
    savings: {
      vs_next_block_sat: nextBlockFee - fee,
      vs_next_block_percent: pct2(nextBlockFee - fee, nextBlockFee),
      by_deferring_sat: defer && recentFloor !== null ? fee - feeForVsize(recentFloor, vsize) : null,
    },
    recent_floor_sat_vb: recentFloor === null ? null : roundRate3(recentFloor),
    amount,
    warnings,
    confidence,
    market: {
      tiers: market.tiers,
      next_block_floor_sat_vb: market.next_block_floor_sat_vb,
      projected_block_count: market.projected_block_count,
    },
    send_wait_v1: { decision: sendWait.decision, reason_codes: [...sendWait.reason_codes] },
  };
}
