import type { Capabilities } from '../../../capabilities';
import { freshnessOf, sharedReadings } from '../../shared/cached-reading';
import { buildNextBlock } from './build';
import { fetchNextBlockData } from './data';
import type { NextBlock } from './schema';

/** The next-block reading of a service's upstreams: the paid resource and the analyst's step share it. */
export const nextBlockReading = sharedReadings(fetchNextBlockData);

/**
 * The next-block answer now, from the shared reading (fetched when older than 10 s). Run in
 * process by the resource's handler and by the analyst's `next_block` step.
 *
 * @throws NoReadingError when the upstream failed and no reading is recent enough to serve
 */
export async function readNextBlock(
  capabilities: Pick<Capabilities, 'bitcoin'> & Partial<Pick<Capabilities, 'snapshots'>>,
): Promise<NextBlock> {
  const current = await nextBlockReading(capabilities.bitcoin).read();
  const now = Date.now();
  const freshness = freshnessOf(current, now, {
    tipHeight: current.value.tip.height,
    newestTip: capabilities.snapshots?.latest()?.tip_height ?? undefined,
  });
  return buildNextBlock(current, freshness, now);
}
