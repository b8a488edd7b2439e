import * as z from 'zod';
import { btcPerKvbToSatPerVb, toMilliSatPerVb } from '../../domain/fee-math';
import type { BitcoinCoreClient } from '../../upstreams/bitcoin-core';
import { CoreRpcError } from '../../upstreams/errors';
import type { MempoolSpaceClient } from '../../upstreams/mempool-space';
import type { BlockSummaryWire } from '../../upstreams/wire';
import type { ChainBlock } from '../history/types';

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
  blocks(from: number, to: number): Promise<ChainBlock[]>;
  /**
   * The relay minimum now: the lowest rate the upstream's mempool accepts, msat/vB (mempool.space's
   * precise `minimumFee`; Core's max(mempoolminfee, minrelaytxfee)). A block that had room would
   * have included any rate meeting it (docs/fee-rules.md#would-have-been-included).
   */
  relayMinimum(): Promise<number>;
}

/** Block subsidy in sats: 50 BTC halved every 210,000 blocks (`docs/fee-rules.md#transactions-and-blocks`). */
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

function fromSummary(block: BlockSummaryWire): ChainBlock {
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
    relayMinimum: async () => toMilliSatPerVb((await client.fetchPreciseFees()).minimumFee),
    async blocks(from, to) {
      const byHeight = new Map<number, ChainBlock>();
      let top = to;
      while (top >= from) {
        const page = await client.fetchRecentBlocks(top);
        if (page.length === 0) break;
        for (const block of page)
          if (block.height >= from && block.height <= to) byHeight.set(block.height, fromSummary(block));
        top = Math.min(...page.map((b) => b.height)) - 1;
      }
      const out: ChainBlock[] = [];
      for (let height = to; height >= from && byHeight.has(height); height -= 1)
        out.push(byHeight.get(height)!);
      return out.reverse();
    },
  };
}

/** A transaction of `getblock hash 2`: its fee (BTC; absent on the coinbase) and vsize. */
const BlockTxWire = z.looseObject({ vsize: z.number().int().min(1), fee: z.number().min(0).optional() });
const VerboseBlockWire = z.looseObject({
  hash: z.string(),
  height: z.number().int(),
  time: z.number().int(),
  weight: z.number().int(),
  tx: z.array(BlockTxWire),
});

/**
 * min, p10, p25, p50, p75, p90, max and the average of a block's fee rates by virtual size, msat/vB,
 * from its transactions (the coinbase left out): the q-percentile is the rate below which a share
 * q of the block's vsize paid less.
 */
export function percentilesOfTransactions(txs: readonly { fee: number; vsize: number }[]): {
  percentiles: number[];
  average: number;
} {
  if (txs.length === 0) return { percentiles: [0, 0, 0, 0, 0, 0, 0], average: 0 };
  const rated = txs
    .map((tx) => ({ rate: (tx.fee * 1000) / tx.vsize, vsize: tx.vsize }))
    .sort((a, b) => a.rate - b.rate);
  const total = rated.reduce((sum, tx) => sum + tx.vsize, 0);
  const at = (q: number) => {
    let seen = 0;
    for (const tx of rated) {
      seen += tx.vsize;
      if (seen >= q * total) return Math.round(tx.rate);
    }
    return Math.round(rated.at(-1)!.rate);
  };
  const fees = txs.reduce((sum, tx) => sum + tx.fee, 0);
  return {
    percentiles: [
      Math.round(rated[0]!.rate),
      at(0.1),
      at(0.25),
      at(0.5),
      at(0.75),
      at(0.9),
      Math.round(rated.at(-1)!.rate),
    ],
    average: Math.round((fees * 1000) / total),
  };
}

/**
 * The chain through Bitcoin Core: each block's transactions (`getblock hash 2`, fees and vsizes)
 * give its percentiles exactly; a node that cannot serve them (pruned) gives `getblockstats`'
 * integer percentiles instead.
 */
export function bitcoinCoreChain(client: BitcoinCoreClient, name = 'bitcoin-core'): ChainReader {
  const fromTransactions = async (hash: string): Promise<ChainBlock | undefined> => {
    let block: z.infer<typeof VerboseBlockWire>;
    try {
      block = await client.call('getblock', [hash, 2], VerboseBlockWire);
    } catch (error) {
      if (error instanceof CoreRpcError) return undefined;
      throw error;
    }
    const paying = block.tx.slice(1).map((tx) => ({ fee: Math.round((tx.fee ?? 0) * 1e8), vsize: tx.vsize }));
    const { percentiles, average } = percentilesOfTransactions(paying);
    const [min, p10, p25, p50, p75, p90, max] = percentiles as [
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
      hash: block.hash,
      time: block.time,
      tx_count: block.tx.length,
      weight: block.weight,
      total_fee: paying.reduce((sum, tx) => sum + tx.fee, 0),
      subsidy: subsidyAtHeight(block.height),
      min,
      p10,
      p25,
      p50,
      p75,
      p90,
      max,
      avg_fee_rate: average,
      stats_from: 'transactions',
    };
  };
  return {
    name,
    tipHeight: () => client.fetchTipHeight(),
    hashAt: (height) => client.getBlockHash(height),
    async relayMinimum() {
      const info = await client.getMempoolInfo();
      return toMilliSatPerVb(
        Math.max(btcPerKvbToSatPerVb(info.mempoolminfee), btcPerKvbToSatPerVb(info.minrelaytxfee)),
      );
    },
    async blocks(from, to) {
      const out: ChainBlock[] = [];
      for (let height = from; height <= to; height += 1) {
        const hash = await client.getBlockHash(height);
        const exact = await fromTransactions(hash);
        if (exact) {
          out.push(exact);
          continue;
        }
        const stats = await client.getBlockStats(height);
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
