import {
  type Decision,
  HEAVY_BACKLOG_BLOCKS,
  MEANINGFUL_MIN_PERCENT,
  MEANINGFUL_MIN_SAT_VB,
  type ReasonCode,
} from './constants';
import { type DerivedFeeFigures, deriveFeeFigures } from './derived';
import type { FeeFiguresInput } from './types';

/** The outcome of send-wait-v1 together with the figures it was computed from. */
export interface SendWaitResult extends DerivedFeeFigures {
  decision: Decision;
  reason_codes: ReasonCode[];
}

/**
 * send-wait-v1 (`docs/fee-rules.md#send-wait-v1`): a pure function of the validated snapshot.
 *
 * Waiting is advised only when the published savings are meaningful — at least
 * {@link MEANINGFUL_MIN_SAT_VB} sat/vB (a 1 sat/vB gap can be rounding of integer tiers alone)
 * and at least {@link MEANINGFUL_MIN_PERCENT} % of the fastest rate (below that the curve is
 * flat once mempool's smoothing is counted). A backlog of {@link HEAVY_BACKLOG_BLOCKS} projected
 * blocks or more is reported, but never turns the answer into wait on its own: one snapshot has
 * no trend. The thresholds compare the published (rounded) figures, so the answer always agrees
 * with the numbers shown beside it.
 *
 * @example
 * decideSendWait({ tiers: { fastest: 13, half_hour: 11, hour: 9, economy: 2, minimum: 1 },
 *   mempool: { count: 9000, vsize: 3_000_000 } }).decision // 'wait'
 */
export function decideSendWait(snapshot: FeeFiguresInput): SendWaitResult {
  const figures = deriveFeeFigures(snapshot);
  const { sat_vb, percent } = figures.potential_savings;
  const meaningful = sat_vb >= MEANINGFUL_MIN_SAT_VB && percent >= MEANINGFUL_MIN_PERCENT;
  const heavy = figures.mempool.projected_block_count >= HEAVY_BACKLOG_BLOCKS;
  const reason_codes: ReasonCode[] = [meaningful ? 'meaningful_fee_curve_savings' : 'limited_wait_savings'];
  if (heavy) reason_codes.push('heavy_backlog');
  return { ...figures, decision: meaningful ? 'wait' : 'send', reason_codes };
}
