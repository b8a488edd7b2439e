import { analyzeBlock, type BlockFacts } from '../../../analysis/block/analyze';
import type { FeeMarket } from '../../../analysis/market';
import { analyzeTransaction, type TransactionFacts } from '../../../analysis/transaction/analyze';
import { type Prevout, parseTransaction, TransactionDecodeError } from '../../../analysis/transaction/parse';
import { UpstreamNotFoundError } from '../../../upstreams/errors';
import type { MempoolSpaceClient } from '../../../upstreams/mempool-space';

/** The mempool.space calls the explainers make (a self-hosted mempool instance serves them too). */
export type ChainReader = Pick<
  MempoolSpaceClient,
  | 'fetchTransaction'
  | 'fetchTransactionHex'
  | 'fetchCpfp'
  | 'fetchBlock'
  | 'fetchRecentBlocks'
  | 'fetchBlockHash'
  | 'fetchBlockTxSummaries'
  | 'fetchReplacement'
>;

/**
 * Why the upstream does not know a transaction, when it can say: replaced by another (RBF), from
 * mempool.space's RBF history. Undefined when it was not replaced or the history cannot be read —
 * an answer about a refusal never fails for it.
 */
export async function replacementOf(
  reader: ChainReader,
  txid: string,
): Promise<{ replaced_by: string; latest: string } | undefined> {
  try {
    return await reader.fetchReplacement(txid);
  } catch {
    return undefined;
  }
}

/** The 404's words and header for a transaction the upstream no longer has because it was replaced. */
export function replacedAnswer(txid: string, replacement: { replaced_by: string; latest: string }) {
  const latest =
    replacement.latest === replacement.replaced_by
      ? ''
      : `, itself replaced since: the latest is ${replacement.latest}`;
  return {
    message: `transaction ${txid} was replaced by ${replacement.replaced_by} (replace-by-fee) and is no longer in the mempool${latest}; explain that one instead. The payment was not settled.`,
    headers: { 'x-replaced-by': replacement.replaced_by },
  };
}

/** The upstream's data does not hold together (its hex is not the transaction it named). */
export class InconsistentUpstreamError extends Error {
  override readonly name = 'InconsistentUpstreamError';
}

/** A call whose 404 means "not there" rather than "not found": answers undefined. */
async function optional<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof UpstreamNotFoundError) return undefined;
    throw error;
  }
}

/**
 * Fetches a transaction (JSON with prevouts, and its raw bytes), its confirming block's fee range
 * or its mempool relatives, and computes its facts. The txid is recomputed from the raw bytes and
 * must match.
 * @throws UpstreamNotFoundError when the upstream does not know the txid
 * @throws InconsistentUpstreamError when the bytes are not the named transaction
 */
export async function explainTransactionFacts(options: {
  reader: ChainReader;
  txid: string;
  market: FeeMarket;
}): Promise<TransactionFacts> {
  const { reader, txid, market } = options;
  const [tx, hex] = await Promise.all([reader.fetchTransaction(txid), reader.fetchTransactionHex(txid)]);
  const prevouts = new Map<string, Prevout>();
  for (const vin of tx.vin) {
    if (vin.prevout)
      prevouts.set(`${vin.txid}:${vin.vout}`, {
        script_hex: vin.prevout.scriptpubkey,
        value_sat: vin.prevout.value,
      });
  }
  let parsed: ReturnType<typeof parseTransaction>;
  try {
    parsed = parseTransaction({ hex, prevouts });
  } catch (error) {
    if (error instanceof TransactionDecodeError)
      throw new InconsistentUpstreamError(`the upstream's raw hex for ${txid} does not decode`);
    throw error;
  }
  if (parsed.txid !== txid)
    throw new InconsistentUpstreamError(`the upstream's raw hex hashes to ${parsed.txid}, not ${txid}`);
  const { status } = tx;
  let blockFeeRange: number[] | undefined;
  let blockWeight: number | undefined;
  let cpfp:
    | {
        ancestors: { txid: string; fee: number; weight: number }[];
        descendants: { txid: string; fee: number; weight: number }[];
      }
    | undefined;
  if (status.confirmed && status.block_height !== undefined) {
    const [block] = await reader.fetchRecentBlocks(status.block_height);
    blockFeeRange = block?.height === status.block_height ? block.extras?.feeRange : undefined;
    blockWeight = block?.height === status.block_height ? block.weight : undefined;
  } else if (!status.confirmed) {
    const view = await optional(reader.fetchCpfp(txid));
    if (view) cpfp = { ancestors: view.ancestors ?? [], descendants: view.descendants ?? [] };
  }
  const status_ = {
    confirmed: status.confirmed,
    ...(status.block_height !== undefined ? { block_height: status.block_height } : {}),
    ...(status.block_hash !== undefined ? { block_hash: status.block_hash } : {}),
    ...(status.block_time !== undefined ? { block_time: status.block_time } : {}),
  };
  return analyzeTransaction({
    parsed,
    status: status_,
    market,
    ...(blockFeeRange ? { blockFeeRange } : {}),
    ...(blockWeight !== undefined ? { blockWeight } : {}),
    ...(cpfp ? { cpfp } : {}),
    upstream: { fee: tx.fee, weight: tx.weight },
  });
}

/** Blocks compared against: the 14 before it that `/api/v1/blocks/:height` returns with it. */
export const RECENT_BLOCKS = 14;

/**
 * Fetches a block (by hash or height) with the blocks before it and its transactions' fees, and
 * computes its facts.
 * @throws UpstreamNotFoundError when the upstream does not know the block
 */
export async function explainBlockFacts(options: {
  reader: ChainReader;
  hashOrHeight: string;
  market: FeeMarket;
}): Promise<BlockFacts> {
  const { reader, hashOrHeight, market } = options;
  let height: number;
  if (/^\d+$/.test(hashOrHeight)) {
    height = Number(hashOrHeight);
    if (market.tip_height !== null && height > market.tip_height) {
      // mempool.space answers 400 for a height above the tip; it is simply not mined yet.
      await reader.fetchBlockHash(height);
    }
  } else {
    height = (await reader.fetchBlock(hashOrHeight)).height;
  }
  const blocks = await reader.fetchRecentBlocks(height);
  const block = blocks[0];
  if (!block || block.height !== height) {
    throw new UpstreamNotFoundError(
      { upstream: 'mempool-space', operation: `GET /api/v1/blocks/${height}` },
      'Block not found',
    );
  }
  const txs = await optional(reader.fetchBlockTxSummaries(block.id));
  return analyzeBlock({
    block,
    previous: blocks.slice(1, 1 + RECENT_BLOCKS),
    tipHeight: market.tip_height,
    relayMinimum: market.tiers.minimum,
    // The coinbase (first) pays no fee and is left out of the notable transactions.
    ...(txs ? { txs: txs.slice(1).map(({ txid, fee, vsize }) => ({ txid, fee, vsize })) } : {}),
  });
}
