import type { BitcoinUpstreams } from '../../../capabilities/bitcoin';
import { btcPerKvbToSatPerVb, roundRate3 } from '../../../domain/fee-math';
import { entryRate, projectedBlockEntry } from '../../../domain/inclusion';
import { percentilesByVsize } from '../../shared/provenance';

/** Where a broadcast transaction sits in the projected blocks. */
export interface Placement {
  basis: 'mempool_projection' | 'block_template' | 'unknown';
  /**
   * The next block's entry rate now, sat/vB: the lowest rate it would include
   * (docs/fee-rules.md#would-have-been-included) — the relay minimum while it has room, its p10
   * (at least the relay minimum) once full.
   */
  entry_fee_rate_sat_vb: number | null;
  /** Whether the rate reaches that entry rate: as projected now, it would be included in the next block. */
  would_be_included_next: boolean | null;
  /** 0 for the next block; the last projected block holds the rest of the mempool. */
  projected_block_index: number | null;
}

const UNKNOWN: Placement = {
  basis: 'unknown',
  entry_fee_rate_sat_vb: null,
  would_be_included_next: null,
  projected_block_index: null,
};

/**
 * Places a fee rate in mempool.space's projected blocks (the first whose entry rate it reaches), or
 * against Core's block template (next block or later), by the one rule of
 * docs/fee-rules.md#would-have-been-included, the relay minimum read beside them. Best effort after
 * the broadcast: an upstream failure here leaves the placement unknown rather than failing a
 * transaction already sent.
 */
export async function placementOf(upstreams: BitcoinUpstreams, rate: number | undefined): Promise<Placement> {
  if (rate === undefined) return UNKNOWN;
  try {
    if (upstreams.mempool) {
      const [blocks, fees] = await Promise.all([
        upstreams.mempool.fetchMempoolBlocks(),
        upstreams.mempool.fetchPreciseFees(),
      ]);
      const entries = blocks.map((block) => projectedBlockEntry(block, fees.minimumFee).entry);
      const next = entries[0] ?? fees.minimumFee; // an empty mempool: the next block has room
      let index = entries.findIndex((entry) => rate >= entry);
      if (entries.length === 0) index = rate >= next ? 0 : -1;
      else if (index < 0) index = entries.length - 1;
      return {
        basis: 'mempool_projection',
        entry_fee_rate_sat_vb: roundRate3(next),
        would_be_included_next: rate >= next,
        projected_block_index: index < 0 ? null : index,
      };
    }
    if (upstreams.core) {
      const [template, info] = await Promise.all([
        upstreams.core.getBlockTemplate(),
        upstreams.core.getMempoolInfo(),
      ]);
      const minimum = btcPerKvbToSatPerVb(Math.max(info.mempoolminfee, info.minrelaytxfee));
      const weight = template.transactions.reduce((sum, tx) => sum + tx.weight, 0);
      const { p10 } = percentilesByVsize(
        template.transactions.map((tx) => {
          const vsize = Math.ceil(tx.weight / 4);
          return { rate: tx.fee / vsize, vsize };
        }),
      );
      const entry = entryRate({ weight, p10 }, minimum);
      return {
        basis: 'block_template',
        entry_fee_rate_sat_vb: roundRate3(entry),
        would_be_included_next: rate >= entry,
        projected_block_index: rate >= entry ? 0 : null,
      };
    }
  } catch {
    // best effort (see above)
  }
  return UNKNOWN;
}
