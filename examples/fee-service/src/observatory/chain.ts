import type { StoredBlock } from '../capabilities/history/types';
import { toMilliSatPerVb } from '../domain/fee-math';
import type { BitcoinCoreClient } from '../upstreams/bitcoin-core';
import type { MempoolSpaceClient } from '../upstreams/mempool-space';
import type { BlockSummaryWire } from '../upstreams/wire';

/**
 * Where the observatory reads the chain: each block's hash and fee statistics, through a real
 * upstream dialect. The judge of every estimate is the blocks read here.
 */
export interface ChainReader {
  name: string;
  /** Height of the upstream's tip. */
  tipHeight(): Promise<number>;
  /** Hash of the block at `height` on the upstream's best chain. */
  hashAt(height: number): Promise<string>;
  /**
   * Blocks `from … to` with their fee statistics, ascending and contiguous, ending at `to`; the
   * lowest ones are left out when the upstream does not have them (a young or pruned chain).
   */
  blocks(from: number, to: number): Promise<StoredBlock[]>;
}

/** Block subsidy in sats: 50 BTC halved every 210,000 blocks (FEES.md section 7). */
export function subsidyAtHeight(height: number): number {
  const halvings = Math.floor(height / 210_000);
  return halvings >= 64 ? 0 : Math.floor(5_000_000_000 / 2 ** halvings);
}

/**
 * The seven figures [min, p10, p25, p50, p75, p90, max] from a mempool `feeRange`: used as is when
 * it has seven entries; a shorter or longer range is read at the nearest position of each
 * quantile; an empty range (a block of only its coinbase) is all zeros — any rate would have fit.
 */
export function percentilesOfFeeRange(range: readonly number[]): number[] {
  if (range.length === 0) return [0, 0, 0, 0, 0, 0, 0];
  if (range.length === 7) return range.map(toMilliSatPerVb);
  const at = (q: number) => toMilliSatPerVb(range[Math.round(q * (range.length - 1))]!);
  return [at(0), at(0.1), at(0.25), at(0.5), at(0.75), at(0.9), at(1)];
}

function fromSummary(block: BlockSummaryWire): StoredBlock {
  const extras = block.extras;
  if (!extras) throw new TypeError(`block ${block.height} has no fee extras (not a mempool backend?)`);
  const [min, p10, p25, p50, p75, p90, max] = percentilesOfFeeRange(extras.feeRange) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    height: block.height,
    hash: block.id,
    time: block.timestamp,
    tx_count: block.tx_count,
    weight: block.weight,
    total_fee: extras.totalFees,
    subsidy: subsidyAtHeight(block.height),
    min,
    p10,
    p25,
    p50,
    p75,
    p90,
    max,
    avg_fee_rate: toMilliSatPerVb(extras.avgFeeRate),
    stats_from: 'fee_range',
  };
}

/**
 * The chain through mempool.space: `/api/v1/blocks/:height` gives 15 blocks with their `extras`
 * (fee range, total fees, average rate) in one request.
 */
export function mempoolSpaceChain(client: MempoolSpaceClient, name = 'mempool.space'): ChainReader {
  return {
    name,
    tipHeight: () => client.fetchTipHeight(),
    hashAt: (height) => client.fetchBlockHash(height),
    async blocks(from, to) {
      const byHeight = new Map<number, StoredBlock>();
      let top = to;
      while (top >= from) {
        const page = await client.fetchRecentBlocks(top);
        if (page.length === 0) break;
        for (const block of page)
          if (block.height >= from && block.height <= to) byHeight.set(block.height, fromSummary(block));
        top = Math.min(...page.map((b) => b.height)) - 1;
      }
      const out: StoredBlock[] = [];
      for (let height = to; height >= from && byHeight.has(height); height -= 1)
        out.push(byHeight.get(height)!);
      return out.reverse();
    },
  };
}

/** The chain through Bitcoin Core: `getblockhash` and `getblockstats` (integer percentiles by weight). */
export function bitcoinCoreChain(client: BitcoinCoreClient, name = 'bitcoin-core'): ChainReader {
  return {
    name,
    tipHeight: () => client.fetchTipHeight(),
    hashAt: (height) => client.getBlockHash(height),
    async blocks(from, to) {
      const out: StoredBlock[] = [];
      for (let height = from; height <= to; height += 1) {
        const [hash, stats] = await Promise.all([client.getBlockHash(height), client.getBlockStats(height)]);
        const [p10, p25, p50, p75, p90] = stats.feerate_percentiles.map(toMilliSatPerVb) as [
          number,
          number,
          number,
          number,
          number,
        ];
        out.push({
          height,
          hash: stats.blockhash ?? hash,
          time: stats.time ?? 0,
          tx_count: stats.txs,
          weight: stats.total_weight ?? 0,
          total_fee: stats.totalfee,
          subsidy: stats.subsidy,
          min: toMilliSatPerVb(stats.minfeerate),
          p10,
          p25,
          p50,
          p75,
          p90,
          max: toMilliSatPerVb(stats.maxfeerate),
          avg_fee_rate: toMilliSatPerVb(stats.avgfeerate),
          stats_from: 'getblockstats',
        });
      }
      return out;
    },
  };
}
