import type { FeeTiers, MempoolSummary } from '../domain/types';
import { SNAPSHOT_SCHEMA } from '../snapshot/schemas';
import type { FeeSnapshotSource, ProjectedBlock, RecordedSnapshot } from '../snapshot/types';
import { validateFeeSnapshot } from '../snapshot/validate';
import { parseBroadcastError, UpstreamNotFoundError } from './errors';
import { createUpstreamHttp, publicUrl, type UpstreamHttpOptions } from './http';
import {
  BlockSummariesWire,
  type BlockSummaryWire,
  BlockTxSummariesWire,
  CpfpWire,
  type EsploraBlockWire as EsploraBlock,
  EsploraBlockWire,
  type EsploraTxWire as EsploraTx,
  EsploraTxWire,
  MempoolBlocksWire,
  type MempoolWire as MempoolInfo,
  MempoolWire,
  parseHashBody,
  parseIntegerBody,
  parseJsonBody,
  parseRawHexBody,
  RbfHistoryWire,
  RecentTransactionsWire,
  type RecentTransactionWire,
  type RecommendedFeesWire as RecommendedFees,
  RecommendedFeesWire,
} from './wire';

/** Snapshot format label of mempool.space snapshots. */
export const MEMPOOL_SPACE_SNAPSHOT_SCHEMA = SNAPSHOT_SCHEMA;
/** Default upstream: the public mempool.space instance. */
export const MEMPOOL_SPACE_DEFAULT_BASE_URL = 'https://mempool.space';

export interface MempoolSpaceClientOptions extends UpstreamHttpOptions {
  /** Base URL of a mempool instance (without `/api`). Default https://mempool.space */
  baseUrl?: string;
  /**
   * Which tiers feed the snapshot: `precise` (3 decimals, may go below 1 sat/vB; falls back to
   * `recommended` when the instance answers 404) or `recommended` (integers ≥ 1). Default precise.
   */
  tiers?: 'precise' | 'recommended';
}

export const MEMPOOL_SPACE_DEFAULTS = { baseUrl: MEMPOOL_SPACE_DEFAULT_BASE_URL, tiers: 'precise' } as const;

const txidOfNode = (node: unknown): string | undefined => {
  const tx = (node as { tx?: { txid?: unknown } } | null)?.tx;
  return typeof tx?.txid === 'string' && /^[0-9a-f]{64}$/.test(tx.txid) ? tx.txid : undefined;
};

/** Walks an RBF tree (root: the latest replacement) to `txid`: its parent replaced it. */
function replacementIn(root: unknown, txid: string): { replaced_by: string; latest: string } | undefined {
  const latest = txidOfNode(root);
  if (!latest) return undefined;
  const walk = (node: unknown, depth: number): string | undefined => {
    if (depth > 100) return undefined;
    const id = txidOfNode(node);
    const children = (node as { replaces?: unknown }).replaces;
    if (!id || !Array.isArray(children)) return undefined;
    for (const child of children) {
      if (txidOfNode(child) === txid) return id;
      const found = walk(child, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  const replacedBy = walk(root, 0);
  return replacedBy ? { replaced_by: replacedBy, latest } : undefined;
}

/** Accepted transaction. */
export interface BroadcastResult {
  txid: string;
}

/** Converts mempool.space's camelCase tiers. */
export function tiersFromRecommended(fees: RecommendedFees): FeeTiers {
  return {
    fastest: fees.fastestFee,
    half_hour: fees.halfHourFee,
    hour: fees.hourFee,
    economy: fees.economyFee,
    minimum: fees.minimumFee,
  };
}

/**
 * Client of the mempool.space REST API (also a self-hosted mempool instance). Every body is
 * checked against the real shape; errors are typed (see `errors.ts`).
 * @example
 * const client = createMempoolSpaceClient({ baseUrl: 'http://127.0.0.1:8999' });
 * const snapshot = await client.fetchSnapshot();
 */
export function createMempoolSpaceClient(options: MempoolSpaceClientOptions = {}) {
  const baseUrl = publicUrl(options.baseUrl ?? MEMPOOL_SPACE_DEFAULTS.baseUrl);
  const tierSource = options.tiers ?? MEMPOOL_SPACE_DEFAULTS.tiers;
  if (tierSource !== 'precise' && tierSource !== 'recommended') {
    throw new TypeError(`invalid mempool.space options: tiers must be precise or recommended`);
  }
  const http = createUpstreamHttp({
    ...options,
    upstream: 'mempool-space',
    baseUrl: options.baseUrl ?? baseUrl,
  });
  const call = (path: string, method = 'GET') => ({
    upstream: 'mempool-space',
    operation: `${method} ${path}`,
  });
  const getJson = async <T>(path: string, parse: (text: string) => T): Promise<T> =>
    parse((await http.request({ path })).text);

  const client = {
    snapshotSchema: MEMPOOL_SPACE_SNAPSHOT_SCHEMA,
    source: baseUrl,

    /** GET /api/v1/fees/recommended: integer tiers, each ≥ 1. */
    fetchRecommendedFees: () =>
      getJson('/api/v1/fees/recommended', (t) =>
        parseJsonBody(call('/api/v1/fees/recommended'), t, RecommendedFeesWire),
      ),
    /** GET /api/v1/fees/precise: tiers with up to 3 decimals, possibly below 1. */
    fetchPreciseFees: () =>
      getJson('/api/v1/fees/precise', (t) =>
        parseJsonBody(call('/api/v1/fees/precise'), t, RecommendedFeesWire),
      ),
    /** GET /api/mempool: count, vsize, total_fee and fee_histogram. */
    fetchMempool: (): Promise<MempoolInfo> =>
      getJson('/api/mempool', (t) => parseJsonBody(call('/api/mempool'), t, MempoolWire)),
    /** GET /api/v1/fees/mempool-blocks: 0–8 projected blocks, normalised to snake_case. */
    fetchMempoolBlocks: async (): Promise<ProjectedBlock[]> => {
      const path = '/api/v1/fees/mempool-blocks';
      const blocks = await getJson(path, (t) => parseJsonBody(call(path), t, MempoolBlocksWire));
      return blocks.map((b) => ({
        block_size: b.blockSize,
        block_vsize: b.blockVSize,
        n_tx: b.nTx,
        total_fees: b.totalFees,
        median_fee: b.medianFee,
        fee_range: b.feeRange,
      }));
    },
    /** GET /api/blocks/tip/height (text integer). */
    fetchTipHeight: async (): Promise<number> =>
      parseIntegerBody(
        call('/api/blocks/tip/height'),
        (await http.request({ path: '/api/blocks/tip/height' })).text,
      ),
    /** GET /api/v1/blocks[/:height]: the 15 blocks ending at `height` (default the tip), with extras. */
    fetchRecentBlocks: (height?: number): Promise<BlockSummaryWire[]> => {
      const path = height === undefined ? '/api/v1/blocks' : `/api/v1/blocks/${height}`;
      return getJson(path, (t) => parseJsonBody(call(path), t, BlockSummariesWire));
    },
    /** GET /api/block/:hash. @throws UpstreamNotFoundError (`Block not found`) */
    fetchBlock: (hash: string): Promise<EsploraBlock> => {
      const path = `/api/block/${encodeURIComponent(hash)}`;
      return getJson(path, (t) => parseJsonBody(call(path), t, EsploraBlockWire));
    },
    /** GET /api/block-height/:height → block hash (text). @throws UpstreamNotFoundError */
    fetchBlockHash: async (height: number): Promise<string> => {
      const path = `/api/block-height/${height}`;
      return parseHashBody(call(path), (await http.request({ path })).text);
    },
    /** GET /api/mempool/recent: the last 10 transactions to enter the mempool. */
    fetchRecentTransactions: (): Promise<RecentTransactionWire[]> =>
      getJson('/api/mempool/recent', (t) =>
        parseJsonBody(call('/api/mempool/recent'), t, RecentTransactionsWire),
      ),
    /** GET /api/tx/:txid. @throws UpstreamNotFoundError (`Transaction not found`) */
    fetchTransaction: (txid: string): Promise<EsploraTx> => {
      const path = `/api/tx/${encodeURIComponent(txid)}`;
      return getJson(path, (t) => parseJsonBody(call(path), t, EsploraTxWire));
    },
    /** GET /api/tx/:txid/hex: the raw transaction. @throws UpstreamNotFoundError */
    fetchTransactionHex: async (txid: string): Promise<string> => {
      const path = `/api/tx/${encodeURIComponent(txid)}/hex`;
      return parseRawHexBody(call(path), (await http.request({ path })).text);
    },
    /** GET /api/v1/cpfp/:txid: unconfirmed ancestors and descendants. @throws UpstreamNotFoundError */
    fetchCpfp: (txid: string): Promise<CpfpWire> => {
      const path = `/api/v1/cpfp/${encodeURIComponent(txid)}`;
      return getJson(path, (t) => parseJsonBody(call(path), t, CpfpWire));
    },
    /**
     * GET /api/v1/tx/:txid/rbf: when the transaction was replaced, the txid that replaced it and
     * the latest replacement (the RBF tree's root); undefined when it has no such history.
     */
    fetchReplacement: async (txid: string): Promise<{ replaced_by: string; latest: string } | undefined> => {
      const path = `/api/v1/tx/${encodeURIComponent(txid)}/rbf`;
      const body = await getJson(path, (t) => parseJsonBody(call(path), t, RbfHistoryWire));
      return replacementIn(body.replacements, txid);
    },
    /** GET /api/v1/block/:hash/summary: txid, fee and vsize of every transaction. @throws UpstreamNotFoundError */
    fetchBlockTxSummaries: (hash: string): Promise<BlockTxSummariesWire> => {
      const path = `/api/v1/block/${encodeURIComponent(hash)}/summary`;
      return getJson(path, (t) => parseJsonBody(call(path), t, BlockTxSummariesWire));
    },
    /**
     * POST /api/tx with the raw hex. Never retried (a repeat would read as "already known").
     * @throws BroadcastRejectedError on a 400, keeping the upstream text in `raw`
     */
    broadcastTransaction: async (hex: string): Promise<BroadcastResult> => {
      const response = await http.request({
        method: 'POST',
        path: '/api/tx',
        body: hex,
        passStatuses: [400],
        attempts: 1,
      });
      if (response.status === 400) throw parseBroadcastError(response.text);
      return { txid: parseHashBody(call('/api/tx', 'POST'), response.text) };
    },

    /** Tiers from the configured endpoint (precise falls back to recommended on 404). */
    fetchTiers: async (): Promise<FeeTiers> => {
      if (tierSource === 'precise') {
        try {
          return tiersFromRecommended(await client.fetchPreciseFees());
        } catch (error) {
          if (!(error instanceof UpstreamNotFoundError)) throw error;
        }
      }
      return tiersFromRecommended(await client.fetchRecommendedFees());
    },

    /**
     * Fetches tiers, mempool, projected blocks and tip height, and validates them into a snapshot.
     * @throws FeeServiceError (UPSTREAM_* or SNAPSHOT_INVALID)
     */
    fetchSnapshot: async (opts: { now?: () => number } = {}): Promise<RecordedSnapshot> => {
      const [tiers, mempool, projected, tip] = await Promise.all([
        client.fetchTiers(),
        client.fetchMempool(),
        client.fetchMempoolBlocks(),
        client.fetchTipHeight(),
      ]);
      const summary: MempoolSummary = { count: mempool.count, vsize: mempool.vsize };
      if (mempool.total_fee !== undefined) summary.total_fee = mempool.total_fee;
      return validateFeeSnapshot({
        snapshot_schema: MEMPOOL_SPACE_SNAPSHOT_SCHEMA,
        source: baseUrl,
        fetched_at: new Date((opts.now ?? Date.now)()).toISOString(),
        tip_height: tip,
        tiers,
        mempool: summary,
        projected_blocks: projected,
        repaired: false,
      });
    },
  } satisfies FeeSnapshotSource & Record<string, unknown>;
  return client;
}
export type MempoolSpaceClient = ReturnType<typeof createMempoolSpaceClient>;
