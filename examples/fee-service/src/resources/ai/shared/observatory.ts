import { median } from '../../../analysis/market';
import type { CapabilitySet } from '../../../capabilities';
import type { UpstreamKind } from '../../../config';
import type { Observatory } from '../../../observatory/observatory';

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
/** Blocks whose median p10 is the "recent floor". */
export const RECENT_FLOOR_BLOCKS = 14;

/**
 * The median p10 of recent blocks: from the observatory's block statistics where it has them, else
 * from the upstream's recent blocks, else null (an upstream failure here only removes the deferral
 * comparison; the advice stands).
 */
export async function recentFloor(capabilities: CapabilitySet): Promise<number | null> {
  try {
    const observatory = observatoryOf(capabilities);
    if (observatory) {
      const stats = await observatory.blockStats({ limit: RECENT_FLOOR_BLOCKS });
      if (stats.length > 0) return median(stats.map((s) => s.p10));
    }
    const blocks = await capabilities.bitcoin?.mempool?.fetchRecentBlocks();
    const p10s = (blocks ?? [])
      .slice(0, RECENT_FLOOR_BLOCKS)
      .map((b) => b.extras?.feeRange[1])
      .filter((p): p is number => p !== undefined);
    return p10s.length > 0 ? median(p10s) : null;
  } catch {
    return null;
  }
}
