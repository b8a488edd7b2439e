import type { Capabilities } from '../../../capabilities';
import { freshnessOf, sharedReadings } from '../../shared/cached-reading';
import { buildFeeLandscape } from './build';
import { fetchLandscapeData } from './data';
import type { FeeLandscape } from './schema';

/** The landscape reading of a service's upstreams: the paid resource and the analyst's step share it. */
export const landscapeReading = sharedReadings(fetchLandscapeData);

/**
 * The landscape answer now, from the shared reading (fetched when older than 10 s). Run in
 * process by the resource's handler and by the analyst's `landscape` step.
 *
 * @throws NoReadingError when the upstream failed and no reading is recent enough to serve
 */
export async function readFeeLandscape(
  capabilities: Pick<Capabilities, 'bitcoin'> & Partial<Pick<Capabilities, 'snapshots'>>,
): Promise<FeeLandscape> {
  const current = await landscapeReading(capabilities.bitcoin).read();
  const freshness = freshnessOf(current, Date.now(), {
    tipHeight: current.value.tip_height,
    newestTip: capabilities.snapshots?.latest()?.tip_height ?? undefined,
  });
  return buildFeeLandscape(current, freshness);
}
