import * as z from 'zod';
import type { UpstreamCallInfo } from './errors';
import { UpstreamResponseError } from './errors';

/**
 * Zod schemas of the upstream bodies as the real services send them. Objects are loose: upstreams
 * add fields over time, and an unknown field must not take the service down.
 */

const rate = z.number().finite().min(0);
const int = z.number().int().min(0);

export const RecommendedFeesWire = z.looseObject({
  fastestFee: rate,
  halfHourFee: rate,
  hourFee: rate,
  economyFee: rate,
  minimumFee: rate,
});
export type RecommendedFeesWire = z.infer<typeof RecommendedFeesWire>;

export const MempoolWire = z.looseObject({
  count: int,
  vsize: int,
  total_fee: z.number().min(0).optional(),
  fee_histogram: z.array(z.tuple([rate, z.number().min(0)])).optional(),
});
export type MempoolWire = z.infer<typeof MempoolWire>;

export const MempoolBlockWire = z.looseObject({
  blockSize: int,
  blockVSize: z.number().min(0),
  nTx: int,
  totalFees: z.number().min(0),
  medianFee: rate,
  feeRange: z.array(rate),
});
export const MempoolBlocksWire = z.array(MempoolBlockWire);
export type MempoolBlockWire = z.infer<typeof MempoolBlockWire>;

export const PoolWire = z.looseObject({ id: z.number(), name: z.string(), slug: z.string() });

/** A block of `/api/v1/blocks` (Esplora block plus mempool's `extras`). */
export const BlockSummaryWire = z.looseObject({
  id: z.string().regex(/^[0-9a-f]{64}$/),
  height: int,
  version: z.number(),
  timestamp: int,
  tx_count: int,
  size: int,
  weight: int,
  merkle_root: z.string(),
  previousblockhash: z.string().nullable().optional(),
  mediantime: int,
  nonce: z.number(),
  bits: z.number(),
  difficulty: z.number(),
  extras: z
    .looseObject({
      totalFees: z.number(),
      medianFee: z.number(),
      feeRange: z.array(z.number()),
      reward: z.number(),
      avgFeeRate: z.number(),
      pool: PoolWire.optional(),
    })
    .optional(),
});
export type BlockSummaryWire = z.infer<typeof BlockSummaryWire>;
export const BlockSummariesWire = z.array(BlockSummaryWire);

/** An Esplora block (`/api/block/:hash`). */
export const EsploraBlockWire = BlockSummaryWire.omit({ extras: true });
export type EsploraBlockWire = z.infer<typeof EsploraBlockWire>;

export const TxStatusWire = z.looseObject({
  confirmed: z.boolean(),
  block_height: int.optional(),
  block_hash: z.string().optional(),
  block_time: int.optional(),
});

export const TxOutWire = z.looseObject({
  scriptpubkey: z.string(),
  scriptpubkey_asm: z.string().optional(),
  scriptpubkey_type: z.string(),
  scriptpubkey_address: z.string().optional(),
  value: int,
});

/** An Esplora transaction (`/api/tx/:txid`). */
export const EsploraTxWire = z.looseObject({
  txid: z.string().regex(/^[0-9a-f]{64}$/),
  version: z.number().int(),
  locktime: int,
  size: int,
  weight: int,
  fee: int,
  vin: z.array(
    z.looseObject({
      txid: z.string(),
      vout: int,
      prevout: TxOutWire.nullable(),
      scriptsig: z.string().optional(),
      witness: z.array(z.string()).optional(),
      is_coinbase: z.boolean(),
      sequence: int,
    }),
  ),
  vout: z.array(TxOutWire),
  status: TxStatusWire,
});
export type EsploraTxWire = z.infer<typeof EsploraTxWire>;

/** One relative in mempool.space's CPFP view (`/api/v1/cpfp/:txid`). */
export const CpfpRelativeWire = z.looseObject({
  txid: z.string().regex(/^[0-9a-f]{64}$/),
  fee: int,
  weight: int,
});

/**
 * mempool.space `/api/v1/tx/:txid/rbf`: `replacements`, the RBF tree holding the transaction (rooted
 * at the latest replacement, each node `{tx: {txid, …}, replaces: [nodes]}`), and `replaces`, the
 * txids it replaced; null when it has no RBF history. The tree is walked by the client.
 */
export const RbfHistoryWire = z.looseObject({
  replacements: z.unknown().optional(),
  replaces: z.array(z.string()).nullable().optional(),
});

/** mempool.space `/api/v1/cpfp/:txid`: the unconfirmed ancestors and descendants of a transaction. */
export const CpfpWire = z.looseObject({
  ancestors: z.array(CpfpRelativeWire).optional(),
  descendants: z.array(CpfpRelativeWire).optional(),
  effectiveFeePerVsize: z.number().optional(),
});
export type CpfpWire = z.infer<typeof CpfpWire>;

/**
 * mempool.space `/api/v1/block/:hash/summary`: every transaction of a block in compact form. Kept
 * to plain types (no per-item format checks, other fields stripped): a block has thousands of
 * entries and refinements per item cost more than the whole analysis (bench section 8).
 */
export const BlockTxSummariesWire = z.array(
  z.object({ txid: z.string(), fee: z.number(), vsize: z.number() }),
);
export type BlockTxSummariesWire = z.infer<typeof BlockTxSummariesWire>;
/** Esplora `/mempool/recent`: the last transactions to enter the mempool. */
export const RecentTransactionWire = z.looseObject({
  txid: z.string().regex(/^[0-9a-f]{64}$/),
  fee: int,
  vsize: z.number().min(1),
  value: int,
});
export type RecentTransactionWire = z.infer<typeof RecentTransactionWire>;
export const RecentTransactionsWire = z.array(RecentTransactionWire);

/** Esplora `/fee-estimates`: confirmation target (string) → rate. */
export const FeeEstimatesWire = z.record(z.string().regex(/^\d+$/), z.number());

/** Parses a JSON text body against a schema. @throws UpstreamResponseError */
export function parseJsonBody<T extends z.ZodType>(
  call: UpstreamCallInfo,
  text: string,
  schema: T,
): z.infer<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpstreamResponseError(call, [`body is not JSON: ${text.slice(0, 80)}`]);
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    throw new UpstreamResponseError(
      call,
      result.error.issues
        .slice(0, 10)
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  return result.data;
}

/** Parses a text body holding one integer (e.g. `/blocks/tip/height`). @throws UpstreamResponseError */
export function parseIntegerBody(call: UpstreamCallInfo, text: string): number {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed))
    throw new UpstreamResponseError(call, [`expected an integer, got ${trimmed.slice(0, 80)}`]);
  return Number(trimmed);
}

/** Parses a raw transaction hex body (`/api/tx/:txid/hex`). @throws UpstreamResponseError */
export function parseRawHexBody(call: UpstreamCallInfo, text: string): string {
  const trimmed = text.trim();
  if (!/^(?:[0-9a-f]{2})+$/i.test(trimmed))
    throw new UpstreamResponseError(call, [`expected raw transaction hex, got ${trimmed.slice(0, 80)}`]);
  return trimmed.toLowerCase();
}

/** Parses a 64-hex text body (a txid or block hash). @throws UpstreamResponseError */
export function parseHashBody(call: UpstreamCallInfo, text: string): string {
  const trimmed = text.trim();
  if (!/^[0-9a-f]{64}$/.test(trimmed))
    throw new UpstreamResponseError(call, [`expected a 64-hex hash, got ${trimmed.slice(0, 80)}`]);
  return trimmed;
}
