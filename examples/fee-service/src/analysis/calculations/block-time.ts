/**
 * Block arrival times. Finding a block is a lottery with a constant chance per second, so blocks
 * arrive as a Poisson process at one per 10 minutes on average: the number in t minutes is
 * Poisson(t / 10), and the wait for n blocks follows an Erlang law (mean 10 n minutes). The wait is
 * memoryless: the time since the last block does not shorten it.
 */

/** Mean minutes between blocks. */
export const MEAN_BLOCK_MINUTES = 10;
/** Most blocks the percentiles are computed for (two weeks); beyond, only the mean is given. */
export const MAX_BLOCKS_FOR_PERCENTILES = 2_016;

const logFactorial = (() => {
  const table = [0];
  return (k: number) => {
    for (let i = table.length; i <= k; i += 1) table.push(table[i - 1]! + Math.log(i));
    return table[k]!;
  };
})();

/** The chance that at least `blocks` blocks arrive within `minutes`: 1 − Σ_{k<n} e^−λ λ^k / k!. */
export function chanceOfBlocksWithin(blocks: number, minutes: number): number {
  if (blocks <= 0) return 1;
  if (minutes <= 0) return 0;
  const lambda = minutes / MEAN_BLOCK_MINUTES;
  let fewer = 0;
  for (let k = 0; k < blocks; k += 1) fewer += Math.exp(-lambda + k * Math.log(lambda) - logFactorial(k));
  return Math.min(1, Math.max(0, 1 - fewer));
}

/** Minutes within which `blocks` blocks arrive with chance `probability` (the Erlang quantile). */
export function minutesForBlocks(blocks: number, probability: number): number {
  let low = 0;
  let high = MEAN_BLOCK_MINUTES * (blocks + 10 * Math.sqrt(blocks) + 50);
  for (let i = 0; i < 100; i += 1) {
    const mid = (low + high) / 2;
    if (chanceOfBlocksWithin(blocks, mid) < probability) low = mid;
    else high = mid;
  }
  return high;
}

export interface BlockWait {
  blocks: number;
  mean_minutes: number;
  /** Half the time they arrive sooner (null past {@link MAX_BLOCKS_FOR_PERCENTILES}). */
  median_minutes: number | null;
  /** Nine times in ten they arrive sooner. */
  p90_minutes: number | null;
}

/** How long `blocks` blocks take: the mean, and the median and 90th percentile to the minute. */
export function waitForBlocks(blocks: number): BlockWait {
  const percentiles = blocks <= MAX_BLOCKS_FOR_PERCENTILES;
  return {
    blocks,
    mean_minutes: blocks * MEAN_BLOCK_MINUTES,
    median_minutes: percentiles ? Math.round(minutesForBlocks(blocks, 0.5)) : null,
    p90_minutes: percentiles ? Math.round(minutesForBlocks(blocks, 0.9)) : null,
  };
}

/** "45 minutes", "2 hours 5 minutes", "3 days 4 hours": a duration as people say it. */
export function formatMinutes(total: number): string {
  const minutes = Math.round(total);
  const unit = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
  if (minutes < 60) return unit(minutes, 'minute');
  if (minutes < 48 * 60) {
    const h = Math.floor(minutes / 60);
    const m = minutes % 60;
    return m === 0 ? unit(h, 'hour') : `${unit(h, 'hour')} ${unit(m, 'minute')}`;
  }
  const hours = Math.round(minutes / 60);
  const d = Math.floor(hours / 24);
  const h = hours % 24;
  return h === 0 ? unit(d, 'day') : `${unit(d, 'day')} ${unit(h, 'hour')}`;
}
