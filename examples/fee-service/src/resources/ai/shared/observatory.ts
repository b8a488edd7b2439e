import { median } from '../../../analysis/market';
import type { CapabilitySet } from '../../../capabilities';
import type { Observatory } from '../../../capabilities/observatory/observatory';
import type { UpstreamKind } from '../../../config';
import { entryRate } from '../../../domain/inclusion';
import { percentilesFromRange } from '../../shared/provenance';

/**
 * The fee observatory of a deployment, if it has one (`history`): the hit rate of a source at a
 * horizon and recent blocks' statistics. Without it the answers say there is no observatory
 * evidence.
 */
export function observatoryOf(capabilities: CapabilitySet): Observatory | undefined {
  return capabilities.history;
}

/** The observatory's name for each dialect's tiers (its source names). */
export const OBSERVATORY_SOURCE: Readonly<Record<UpstreamKind, string>> = {
  mempool: 'mempool.space',
  esplora: 'esplora',
  core: 'core-economical',
};

/** Window of the hit rate behind a confidence, hours. */
export const EVIDENCE_WINDOW_HOURS = 168;
/** Blocks whose median entry rate is the "recent floor". */
export const RECENT_FLOOR_BLOCKS = 14;

/**
 * The median entry rate of recent blocks — the lowest rate each would have included
 * (docs/fee-rules.md#would-have-been-included): from the observatory's block statistics where it
 * has them, else from the upstream's recent blocks judged against `relayMinimum` (today's), else
 * null (an upstream failure here only removes the deferral comparison; the advice stands).
 */
export async function recentFloor(capabilities: CapabilitySet, relayMinimum: number): Promise<number | null> {
  try {
    const observatory = observatoryOf(capabilities);
    if (observatory) {
      const stats = await observatory.blockStats({ limit: RECENT_FLOOR_BLOCKS });
      if (stats.length > 0) return median(stats.map((s) => s.entry_rate));
    }
    const blocks = await capabilities.bitcoin?.mempool?.fetchRecentBlocks();
    const entries = (blocks ?? []).slice(0, RECENT_FLOOR_BLOCKS).flatMap((b) => {
      const range = b.extras?.feeRange;
      return range
        ? [entryRate({ weight: b.weight, p10: percentilesFromRange(range).p10 }, relayMinimum)]
        : [];
    });
    return entries.length > 0 ? median(entries) : null;
  } catch {
    return null;
  }
}
