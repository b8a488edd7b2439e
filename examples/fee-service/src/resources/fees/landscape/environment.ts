import { HEAVY_BACKLOG_BLOCKS } from '../../../domain/constants';

/**
 * fee-environment-v1: a name for the fee environment and the trend of block fee rates, from
 * thresholds documented here and in docs/fee-service-contract.md#get-apiv1feeslandscape.
 */

export const ENVIRONMENT_NAMES = ['quiet', 'normal', 'busy', 'congested', 'spike'] as const;
export type EnvironmentName = (typeof ENVIRONMENT_NAMES)[number];
export const TREND_DIRECTIONS = ['rising', 'steady', 'falling'] as const;

/** fastest at or below this, with at most one block waiting: quiet. */
export const QUIET_MAX_FASTEST = 2;
/** fastest at or below this, with at most three blocks waiting: normal. */
export const NORMAL_MAX_FASTEST = 10;
export const NORMAL_MAX_BACKLOG_BLOCKS = 3;
/** fastest above this, or a backlog of 8 blocks or more: congested. */
export const CONGESTED_MIN_FASTEST = 50;
/** fastest at least this many times the recent blocks' median (and above 10 sat/vB): spike. */
export const SPIKE_RATIO = 3;
export const SPIKE_MIN_FASTEST = 10;
/** Recent median at least this much above (below) the earlier one: rising (falling). */
export const TREND_THRESHOLD_PERCENT = 15;

/** Names the environment; the first rule that holds wins, in this order. */
export function nameEnvironment(input: {
  fastest: number;
  projectedBlockCount: number;
  recentMedian: number;
}): { name: EnvironmentName; rule: string } {
  const { fastest, projectedBlockCount: backlog, recentMedian } = input;
  if (fastest >= SPIKE_MIN_FASTEST && fastest >= SPIKE_RATIO * recentMedian) {
    return {
      name: 'spike',
      rule: `fastest ${fastest} ≥ ${SPIKE_RATIO} × the recent blocks' median ${recentMedian} and ≥ ${SPIKE_MIN_FASTEST} sat/vB`,
    };
  }
  if (fastest > CONGESTED_MIN_FASTEST || backlog >= HEAVY_BACKLOG_BLOCKS) {
    return {
      name: 'congested',
      rule: `fastest ${fastest} > ${CONGESTED_MIN_FASTEST} sat/vB or ${backlog} ≥ ${HEAVY_BACKLOG_BLOCKS} projected blocks`,
    };
  }
  if (fastest <= QUIET_MAX_FASTEST && backlog <= 1) {
    return {
      name: 'quiet',
      rule: `fastest ${fastest} ≤ ${QUIET_MAX_FASTEST} sat/vB and ${backlog} ≤ 1 projected block`,
    };
  }
  if (fastest <= NORMAL_MAX_FASTEST && backlog <= NORMAL_MAX_BACKLOG_BLOCKS) {
    return {
      name: 'normal',
      rule: `fastest ${fastest} ≤ ${NORMAL_MAX_FASTEST} sat/vB and ${backlog} ≤ ${NORMAL_MAX_BACKLOG_BLOCKS} projected blocks`,
    };
  }
  return {
    name: 'busy',
    rule: `none of quiet, normal, congested or spike: fastest ${fastest} sat/vB, ${backlog} projected block${backlog === 1 ? '' : 's'}`,
  };
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Compares the last 3 blocks' median rates with the 3 before (medians newest first). */
export function trendOf(mediansNewestFirst: readonly number[]) {
  const recent = mediansNewestFirst.slice(0, 3);
  const earlier = mediansNewestFirst.slice(3, 6);
  const recentMedian = round3(mean(recent));
  const earlierMedian = earlier.length > 0 ? round3(mean(earlier)) : recentMedian;
  const change = earlierMedian === 0 ? 0 : round1((100 * (recentMedian - earlierMedian)) / earlierMedian);
  const direction =
    change >= TREND_THRESHOLD_PERCENT ? 'rising' : change <= -TREND_THRESHOLD_PERCENT ? 'falling' : 'steady';
  return {
    direction: direction as (typeof TREND_DIRECTIONS)[number],
    recent_median_sat_vb: recentMedian,
    earlier_median_sat_vb: earlierMedian,
    change_percent: change,
    rule: `rising at +${TREND_THRESHOLD_PERCENT} % or more, falling at −${TREND_THRESHOLD_PERCENT} % or less, of the mean median rate of the last 3 blocks against the 3 before`,
  };
}

/** Lower edges of the histogram bands, sat/vB (mempool.space's fee levels, with a sub-1 band). */
export const BAND_EDGES = [
  0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 125, 150, 175, 200, 250, 300, 350,
  400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000,
] as const;
