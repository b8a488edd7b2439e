import type { BitcoinUpstreams } from '../../../capabilities/bitcoin';
import { btcPerKvbToSatPerVb } from '../../../domain/fee-math';
import { fetchSourceQuotes, type SourceQuote } from '../../shared/chain-sources';

/** One transaction of the projected block. */
export interface ProjectedTx {
  txid: string;
  fee: number;
  vsize: number;
}

/** What the next-block prediction is built from. */
export interface NextBlockData {
  /** Core's block template (its exact transactions), or mempool.space's projection. */
  basis: 'block_template' | 'mempool_projection';
  tip: { height: number; hash: string; time: number };
  /** Height of the projected block. */
  height: number;
  /** The block's transactions (the template), or its totals (the projection). */
  block:
    | { kind: 'template'; txs: ProjectedTx[]; weight: number }
    | {
        kind: 'projection';
        vsize: number;
        tx_count: number;
        total_fees: number;
        fee_range: number[];
        /** The mempool's newest arrivals (mempool.space lists no projected block's transactions). */
        recent: ProjectedTx[];
      };
  /** The mempool's minimum relay rate, sat/vB. */
  min_relay_fee: number;
  estimators: SourceQuote[];
  urls: string[];
}

/**
 * Reads the next block: Core's `getblocktemplate` when Core is configured (the exact transactions
 * it would mine), else mempool.space's first projected block and the mempool's newest arrivals;
 * with it the tip and every estimator's quote.
 * @throws when the upstream fails
 */
export async function fetchNextBlockData(upstreams: BitcoinUpstreams): Promise<NextBlockData> {
  const { core, mempool } = upstreams;
  const urls = [mempool?.source, upstreams.esplora?.source, core?.source].filter((u): u is string => !!u);
  const estimators = fetchSourceQuotes(upstreams);
  if (core) {
    const [template, tip, info] = await Promise.all([
      core.getBlockTemplate(),
      core.getTip(),
      core.getMempoolInfo(),
    ]);
    return {
      basis: 'block_template',
      tip: { height: tip.height, hash: tip.hash, time: tip.time },
      height: template.height,
      block: {
        kind: 'template',
        txs: template.transactions.map((tx) => ({
          txid: tx.txid,
          fee: tx.fee,
          vsize: Math.ceil(tx.weight / 4),
        })),
        weight: template.transactions.reduce((sum, tx) => sum + tx.weight, 0),
      },
      min_relay_fee: Math.max(
        btcPerKvbToSatPerVb(info.mempoolminfee),
        btcPerKvbToSatPerVb(info.minrelaytxfee),
      ),
      estimators: await estimators,
      urls,
    };
  }
  if (!mempool) throw new TypeError('the next block needs Bitcoin Core or mempool.space');
  const [blocks, recentBlocks, recent, fees] = await Promise.all([
    mempool.fetchMempoolBlocks(),
    mempool.fetchRecentBlocks(),
    mempool.fetchRecentTransactions(),
    mempool.fetchPreciseFees(),
  ]);
  const tip = recentBlocks[0];
  if (!tip) throw new Error('mempool.space listed no block');
  const first = blocks[0];
  return {
    basis: 'mempool_projection',
    tip: { height: tip.height, hash: tip.id, time: tip.timestamp },
    height: tip.height + 1,
    block: {
      kind: 'projection',
      vsize: Math.round(first?.block_vsize ?? 0),
      tx_count: first?.n_tx ?? 0,
      total_fees: Math.round(first?.total_fees ?? 0),
      fee_range: first?.fee_range ?? [],
      recent: recent.map((tx) => ({ txid: tx.txid, fee: tx.fee, vsize: tx.vsize })),
    },
    min_relay_fee: fees.minimumFee,
    estimators: await estimators,
    urls,
  };
}
