import type { BitcoinUpstreams } from '../../../capabilities/bitcoin';
import { btcPerKvbToSatPerVb, roundRate3 } from '../../../domain/fee-math';
import { FULL_BLOCK_VSIZE } from '../../mining/nextblock/build';

/** Where a broadcast transaction sits in the projected blocks. */
export interface Placement {
  basis: 'mempool_projection' | 'block_template' | 'unknown';
  /** The rate the next block takes now, sat/vB. */
  entry_fee_rate_sat_vb: number | null;
  would_confirm_next: boolean | null;
  /** 0 for the next block; the last projected block holds the rest of the mempool. */
  projected_block_index: number | null;
}

const UNKNOWN: Placement = {
  basis: 'unknown',
  entry_fee_rate_sat_vb: null,
  would_confirm_next: null,
  projected_block_index: null,
};

/**
 * Places a fee rate in mempool.space's projected blocks (the first whose lowest rate it meets), or
 * against Core's block template (next block or later). Best effort after the broadcast: an upstream
 * failure here leaves the placement unknown rather than failing a transaction already sent.
 */
export async function placementOf(upstreams: BitcoinUpstreams, rate: number | undefined): Promise<Placement> {
  if (rate === undefined) return UNKNOWN;
  try {
    if (upstreams.mempool) {
      const blocks = await upstreams.mempool.fetchMempoolBlocks();
      if (blocks.length === 0) {
        return {
          basis: 'mempool_projection',
          entry_fee_rate_sat_vb: 0,
          would_confirm_next: true,
          projected_block_index: 0,
        };
      }
      const floor = (i: number) =>
        blocks[i]!.block_vsize >= FULL_BLOCK_VSIZE ? (blocks[i]!.fee_range[0] ?? 0) : 0;
      let index = blocks.findIndex((_, i) => rate >= floor(i));
      if (index < 0) index = blocks.length - 1;
      return {
        basis: 'mempool_projection',
        entry_fee_rate_sat_vb: roundRate3(floor(0)),
        would_confirm_next: index === 0,
        projected_block_index: index,
      };
    }
    if (upstreams.core) {
      const [template, info] = await Promise.all([
        upstreams.core.getBlockTemplate(),
        upstreams.core.getMempoolInfo(),
      ]);
      const minimum = btcPerKvbToSatPerVb(Math.max(info.mempoolminfee, info.minrelaytxfee));
      const weight = template.transactions.reduce((sum, tx) => sum + tx.weight, 0);
      const rates = template.transactions.map((tx) => tx.fee / Math.ceil(tx.weight / 4));
      const entry =
        weight / 4 >= FULL_BLOCK_VSIZE && rates.length > 0 ? Math.max(minimum, Math.min(...rates)) : minimum;
      return {
        basis: 'block_template',
        entry_fee_rate_sat_vb: roundRate3(entry),
        would_confirm_next: rate >= entry,
        projected_block_index: rate >= entry ? 0 : null,
      };
    }
  } catch {
    // best effort (see above)
  }
  return UNKNOWN;
}
