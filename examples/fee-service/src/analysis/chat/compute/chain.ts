/**
 * The chat's chain calculations: how long blocks take (a Poisson process, one block per 10 minutes
 * on average), what the next block takes now, and the subsidy at a height with the next halving.
 */
import { subsidyAt } from '../../../domain/chain';
import {
  chanceOfBlocksWithin,
  formatMinutes,
  MEAN_BLOCK_MINUTES,
  waitForBlocks,
} from '../../calculations/block-time';
import { feeAt } from '../../calculations/bump';
import { fromInteger, fromRate, shift, toGrouped, toNumber } from '../../calculations/decimal';
import { formatInt, formatRate, formatSats, plural } from '../../format';
import type { FeeMarket } from '../../market';
import type { Quantities } from './quantities';
import { sizeOf } from './sizes-and-rates';
import type { Computation, ComputedFigure } from './types';

const figure = (name: string, value: number, unit: string): ComputedFigure => ({ name, value, unit });
const percent1 = (p: number) => Math.round(p * 1000) / 10;
export const HALVING_INTERVAL = 210_000;

/** How long a number of blocks takes, and how many blocks a span brings (with its chances). */
export function blockTime(q: Quantities, asksNextBlock: boolean): Computation | undefined {
  const counts = q.blocks.map((b) => b.count).filter((n) => n > 0 && n <= 1_000_000);
  if (counts.length === 0 && asksNextBlock && q.minutes.length === 0) counts.push(1);
  const inputs: ComputedFigure[] = [];
  const results: ComputedFigure[] = [];
  const sentences: string[] = [];
  const noun = q.blocks[0]?.noun ?? 'block';
  if (q.minutes.length > 0) {
    for (const minutes of q.minutes) {
      inputs.push(figure('minutes', minutes, 'minutes'));
      const expected = Math.round((minutes / MEAN_BLOCK_MINUTES) * 100) / 100;
      const atLeast = counts.length > 0 ? counts : [1];
      results.push(figure('expected_blocks', expected, 'blocks'));
      const chances = atLeast.map((n) => {
        const p = percent1(chanceOfBlocksWithin(n, minutes));
        results.push(figure(`chance_at_least_${n}`, p, '%'));
        // 99.96 % is not a certainty: it is never written as 100 %.
        const written = p >= 99.95 ? 'over 99.9%' : p <= 0.05 ? 'under 0.1%' : `${p}%`;
        return `at least ${plural(n, noun)}: ${written}`;
      });
      sentences.push(
        `In ${formatMinutes(minutes)} ${expected} ${expected === 1 ? 'block is' : 'blocks are'} expected; the chance of ${chances.join('; ')}.`,
      );
    }
  } else {
    for (const n of counts) {
      const wait = waitForBlocks(n);
      inputs.push(figure('blocks', n, noun === 'block' ? 'blocks' : 'confirmations'));
      results.push(figure('mean_minutes', wait.mean_minutes, 'minutes'));
      let spread = '';
      if (wait.median_minutes !== null && wait.p90_minutes !== null) {
        results.push(
          figure('median_minutes', wait.median_minutes, 'minutes'),
          figure('p90_minutes', wait.p90_minutes, 'minutes'),
        );
        spread = `; half the time within ${formatMinutes(wait.median_minutes)}, nine times in ten within ${formatMinutes(wait.p90_minutes)}`;
      }
      const what =
        noun === 'confirmation' ? plural(n, 'confirmation') : n === 1 ? 'The next block' : plural(n, 'block');
      sentences.push(
        `${what[0]!.toUpperCase()}${what.slice(1)} ${n === 1 ? 'takes' : 'take'} ${formatMinutes(wait.mean_minutes)} on average${spread}.`,
      );
    }
  }
  if (sentences.length === 0) return undefined;
  return {
    kind: 'block_time',
    inputs,
    results,
    rule: 'blocks arrive as a Poisson process at one per 10 minutes on average: n blocks take an Erlang-distributed time (mean 10 n minutes), and the chance of at least n blocks in t minutes is 1 − Σ_{k<n} e^(−t/10) (t/10)^k / k!',
    assumptions: [
      'The wait is memoryless: the time since the last block does not shorten it. A first confirmation also needs the transaction to be in that block.',
    ],
    text: sentences.join(' '),
  };
}

const FLOOR_SOURCE: Record<FeeMarket['floor_source'], string> = {
  projected_block:
    'the first projected block is full: its 10th-percentile rate stands for its lowest included rate',
  minimum_tier: 'the first projected block has room: the relay minimum is enough',
  fastest_tier: 'the upstream projects no blocks, so its fastest tier stands in',
};

/** The rate the next block takes now, and the fee for a stated (or typical) size at it. */
export function nextBlockRate(q: Quantities, market: FeeMarket): Computation {
  const size = sizeOf(q, true)!;
  const floor = market.next_block_floor_sat_vb;
  const fastest = market.tiers.fastest;
  const atFloor = Number(feeAt(fromRate(floor), size.vsize));
  const atFastest = Number(feeAt(fromRate(fastest), size.vsize));
  return {
    kind: 'next_block_rate',
    inputs: [
      figure('next_block_floor', floor, 'sat/vB'),
      figure('fastest_fee_rate', fastest, 'sat/vB'),
      ...size.inputs,
    ],
    results: [figure('fee_at_floor', atFloor, 'sats'), figure('fee_at_fastest', atFastest, 'sats')],
    rule: 'the next block as projected now: its floor, and the fee = rate × vsize rounded up',
    assumptions: [
      ...size.assumptions,
      'A projection: transactions arriving before the block is found can outbid it, and a block can come in seconds or take an hour.',
    ],
    text: `The next block takes ${formatRate(floor)} now (${FLOOR_SOURCE[market.floor_source]}); the fastest tier quotes ${formatRate(fastest)}. For ${size.how} that is ${formatSats(atFloor)} at the floor, ${formatSats(atFastest)} at the fastest tier.`,
  };
}

/** Each tier's confirmation target in blocks (docs/fee-rules.md#tier-targets). */
const TIER_TARGETS = [
  ['economy', 144],
  ['hour', 6],
  ['half_hour', 3],
  ['fastest', 1],
] as const;

/** The live tier for a confirmation target of n blocks: the one with the longest target within it. */
export function targetRate(q: Quantities, market: FeeMarket): Computation | undefined {
  const blocks = q.blocks[0]?.count;
  if (blocks === undefined || blocks < 1) return undefined;
  const [tier, target] = TIER_TARGETS.find(([, t]) => t <= blocks)!;
  const size = sizeOf(q, true)!;
  const rate = market.tiers[tier];
  const fee = Number(feeAt(fromRate(rate), size.vsize));
  return {
    kind: 'target_rate',
    inputs: [
      figure('target_blocks', blocks, 'blocks'),
      figure(`${tier}_fee_rate`, rate, 'sat/vB'),
      ...size.inputs,
    ],
    results: [figure('fee_rate', rate, 'sat/vB'), figure('fee', fee, 'sats')],
    rule: 'the tier whose target fits the horizon (fastest 1 block, half hour 3, hour 6, economy 144); fee = rate × vsize rounded up',
    assumptions: [
      ...size.assumptions,
      'Tiers are estimates from the current mempool, not promises: a rate can rise while a transaction waits.',
    ],
    text: `To confirm within ${plural(blocks, 'block')} (about ${formatMinutes(blocks * MEAN_BLOCK_MINUTES)}), the ${tier.replace('_', ' ')} tier (a ${target}-block target) quotes ${formatRate(rate)}: ${formatSats(fee)} for ${size.how}.`,
  };
}

/** The subsidy at a height (the stated one, else the tip) and the next halving. */
export function subsidy(q: Quantities, market: FeeMarket): Computation | undefined {
  const stated = q.heights[0];
  const height = stated ?? (market.tip_height === null ? undefined : market.tip_height + 1);
  if (height === undefined) return undefined;
  const sats = subsidyAt(height);
  const halvings = Math.floor(height / HALVING_INTERVAL);
  const next = (halvings + 1) * HALVING_INTERVAL;
  const left = next - height;
  const nextSubsidy = subsidyAt(next);
  const btc = (s: number) => `${toGrouped(shift(fromInteger(s), -8))} BTC`;
  const where =
    stated === undefined
      ? `The next block, ${formatInt(height)} (the tip is ${formatInt(market.tip_height!)}),`
      : `Block ${formatInt(height)}`;
  return {
    kind: 'subsidy',
    inputs: [
      figure('height', height, 'height'),
      ...(stated === undefined ? [figure('tip_height', market.tip_height!, 'height')] : []),
    ],
    results: [
      figure('subsidy', sats, 'sats'),
      figure('subsidy_btc', toNumber(shift(fromInteger(sats), -8)), 'BTC'),
      figure('halvings', halvings, 'halvings'),
      figure('next_halving_height', next, 'height'),
      figure('blocks_to_next_halving', left, 'blocks'),
      figure('days_to_next_halving', Math.round((left * MEAN_BLOCK_MINUTES) / 1440), 'days'),
      figure('next_subsidy', nextSubsidy, 'sats'),
    ],
    rule: 'subsidy = 50 BTC halved every 210,000 blocks (floor(height / 210,000) halvings)',
    assumptions: [
      'Days to the halving at 10 minutes a block; blocks have come a little faster than that on average.',
    ],
    text: `${where} carries a subsidy of ${btc(sats)} (${formatSats(sats)}): ${halvings === 0 ? 'the initial 50 BTC, not yet halved' : halvings === 1 ? '50 BTC halved once' : `50 BTC halved ${halvings} times`}. The next halving is at block ${formatInt(next)}, ${plural(left, 'block')} away (about ${plural(Math.round((left * MEAN_BLOCK_MINUTES) / 1440), 'day')}), when it becomes ${btc(nextSubsidy)}.`,
  };
}
