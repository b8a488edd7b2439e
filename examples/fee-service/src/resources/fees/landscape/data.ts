import type { BitcoinUpstreams } from '../../../capabilities/bitcoin';
import { SNAPSHOT_SCHEMA } from '../../../snapshot/schemas';
import type { ProjectedBlock } from '../../../snapshot/types';
import { validateFeeSnapshot } from '../../../snapshot/validate';
import type { MempoolSpaceClient } from '../../../upstreams/mempool-space';
import { fetchSourceQuotes, type SourceQuote } from '../../shared/chain-sources';

/** Blocks the landscape shows (the trend compares the first 3 with the next 3). */
export const RECENT_BLOCKS = 10;

/** Everything the landscape is built from: one reading of every configured upstream. */
export interface LandscapeData {
  tip_height: number;
  /** Base URLs read. */
  urls: string[];
  sources: SourceQuote[];
  mempool: { count: number; vsize: number; total_fee: number; histogram: Array<[number, number]> };
  projected_blocks: ProjectedBlock[];
  recent_blocks: Array<{
    height: number;
    time: number;
    tx_count: number;
    total_fees: number;
    fee_range: number[];
  }>;
}

/**
 * Reads the landscape: every source's quote, and from mempool.space the mempool with its
 * histogram, the projected blocks and the last blocks' fee ranges. The primary figures pass the
 * snapshot rules (docs/fee-service-contract.md#limits: a reading that breaks them is refused,
 * never served).
 * @throws when mempool.space fails or answers figures that break the rules
 */
export async function fetchLandscapeData(upstreams: BitcoinUpstreams): Promise<LandscapeData> {
  const mempool = upstreams.mempool as MempoolSpaceClient;
  const [sources, info, projected, blocks, tip] = await Promise.all([
    fetchSourceQuotes(upstreams),
    mempool.fetchMempool(),
    mempool.fetchMempoolBlocks(),
    mempool.fetchRecentBlocks(),
    mempool.fetchTipHeight(),
  ]);
  const primary = sources.find((quote) => quote.source === 'mempool.space');
  if (primary?.status !== 'ok')
    throw new Error(
      `mempool.space gave no quote: ${primary?.status === 'unavailable' ? primary.reason : 'none'}`,
    );
  // The same rules as the decision's snapshot: a reading that breaks them is never served.
  validateFeeSnapshot({
    snapshot_schema: SNAPSHOT_SCHEMA,
    source: mempool.source,
    fetched_at: new Date().toISOString(),
    tip_height: tip,
    tiers: primary.tiers,
    mempool: { count: info.count, vsize: info.vsize },
    projected_blocks: projected,
    repaired: false,
  });
  const urls = [mempool.source];
  if (upstreams.esplora) urls.push(upstreams.esplora.source);
  if (upstreams.core) urls.push(upstreams.core.source);
  return {
    tip_height: tip,
    urls,
    sources,
    mempool: {
      count: info.count,
      vsize: info.vsize,
      total_fee: Math.round(info.total_fee ?? 0),
      histogram: (info.fee_histogram ?? []).map(([rate, vsize]) => [rate, vsize] as [number, number]),
    },
    projected_blocks: projected,
    recent_blocks: blocks.slice(0, RECENT_BLOCKS).map((block) => ({
      height: block.height,
      time: block.timestamp,
      tx_count: block.tx_count,
      total_fees: block.extras?.totalFees ?? 0,
      fee_range: block.extras?.feeRange ?? [],
    })),
  };
}
