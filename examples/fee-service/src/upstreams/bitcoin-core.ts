import * as z from 'zod';
import { btcPerKvbToSatPerVb } from '../domain/fee-math';
import type { FeeTiers } from '../domain/types';
import { BITCOIN_CORE_SNAPSHOT_SCHEMA } from '../snapshot/schemas';
import type { FeeSnapshotSource, RecordedSnapshot } from '../snapshot/types';
import { repairTierOrder, validateFeeSnapshot } from '../snapshot/validate';
import {
  BroadcastRejectedError,
  CoreRpcError,
  UpstreamResponseError,
  UpstreamUnavailableError,
} from './errors';
import { createUpstreamHttp, publicUrl, type UpstreamHttpOptions } from './http';

/** estimatesmartfee target per tier; `minimum` is max(mempoolminfee, minrelaytxfee). */
export const CORE_TIER_TARGETS = { fastest: 1, half_hour: 3, hour: 6, economy: 144 } as const;

export type EstimateMode = 'economical' | 'conservative';

export interface BitcoinCoreClientOptions extends UpstreamHttpOptions {
  /** RPC URL, e.g. http://127.0.0.1:8332 (credentials may be in the URL). */
  url: string;
  /** RPC user (or in the URL). */
  username?: string;
  /** RPC password (or in the URL). */
  password?: string;
  /** estimatesmartfee mode for the snapshot. Default `economical` (Core's default since 28.0). */
  mode?: EstimateMode;
}

const RpcEnvelope = z.looseObject({
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number(), message: z.string() }).nullable().optional(),
});

const SmartFeeWire = z.looseObject({
  feerate: z.number().min(0).optional(),
  errors: z.array(z.string()).optional(),
  blocks: z.number().int().min(0),
});

const MempoolInfoWire = z.looseObject({
  loaded: z.boolean().optional(),
  size: z.number().int().min(0),
  bytes: z.number().int().min(0),
  usage: z.number().optional(),
  total_fee: z.number().min(0).optional(),
  maxmempool: z.number().optional(),
  mempoolminfee: z.number().min(0),
  minrelaytxfee: z.number().min(0),
});
export type MempoolInfo = z.infer<typeof MempoolInfoWire>;

const BlockStatsWire = z.looseObject({
  avgfee: z.number().optional(),
  avgfeerate: z.number(),
  blockhash: z.string().optional(),
  feerate_percentiles: z.tuple([z.number(), z.number(), z.number(), z.number(), z.number()]),
  height: z.number().int(),
  maxfeerate: z.number(),
  minfeerate: z.number(),
  subsidy: z.number(),
  time: z.number().optional(),
  totalfee: z.number(),
  total_weight: z.number().optional(),
  txs: z.number().int(),
});
export type BlockStats = z.infer<typeof BlockStatsWire>;

const BlockTemplateWire = z.looseObject({
  height: z.number().int().min(0),
  previousblockhash: z.string(),
  coinbasevalue: z.number().int().min(0),
  curtime: z.number().int(),
  transactions: z.array(
    z.looseObject({
      txid: z.string().regex(/^[0-9a-f]{64}$/),
      hash: z.string().optional(),
      fee: z.number().int().min(0),
      weight: z.number().int().min(1),
      depends: z.array(z.number().int()).optional(),
    }),
  ),
});
export type BlockTemplate = z.infer<typeof BlockTemplateWire>;

const BlockHeaderWire = z.looseObject({
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  height: z.number().int().min(0),
  time: z.number().int(),
});

/** A smart fee estimate in sat/vB, or why there is none. */
export interface SmartFeeEstimate {
  /** sat/vB (BTC/kvB × 100,000, exact), undefined when Core has no estimate. */
  satPerVb: number | undefined;
  /** Target the estimate is actually for. */
  blocks: number;
  errors: string[];
}

export interface TestMempoolAcceptResult {
  txid?: string;
  wtxid?: string;
  allowed?: boolean;
  'reject-reason'?: string;
  /** Core ≥ 29: the full refusal message (`min relay fee not met, 100 < 141`). */
  'reject-details'?: string;
  vsize?: number;
  fees?: { base: number };
}

/**
 * Client of the Bitcoin Core JSON-RPC interface. JSON-RPC errors (HTTP 500 with a JSON body, or
 * 200 under JSON-RPC 2.0) become {@link CoreRpcError}; broadcast rejections
 * {@link BroadcastRejectedError}.
 * @example const core = createBitcoinCoreClient({ url: 'http://127.0.0.1:8332', username: 'u', password: 'p' });
 */
export function createBitcoinCoreClient(options: BitcoinCoreClientOptions) {
  const problems: string[] = [];
  if (typeof options?.url !== 'string' || options.url.length === 0) problems.push('url is required');
  const mode = options?.mode ?? 'economical';
  if (mode !== 'economical' && mode !== 'conservative')
    problems.push('mode must be economical or conservative');
  if (problems.length > 0) throw new TypeError(`invalid Bitcoin Core options: ${problems.join('; ')}`);
  const url = new URL(options.url);
  if (options.username !== undefined) url.username = encodeURIComponent(options.username);
  if (options.password !== undefined) url.password = encodeURIComponent(options.password);
  const source = publicUrl(options.url);
  const http = createUpstreamHttp({ ...options, upstream: 'bitcoin-core', baseUrl: url.toString() });
  let nextId = 1;

  async function rpc<T extends z.ZodType>(
    method: string,
    params: unknown[],
    schema: T,
    attempts?: number,
  ): Promise<z.infer<T>> {
    const body = JSON.stringify({ jsonrpc: '1.0', id: nextId++, method, params });
    const call = { upstream: 'bitcoin-core', operation: method };
    const response = await http.request({
      method: 'POST',
      path: '/',
      body,
      contentType: 'application/json',
      passStatuses: [400, 404, 500],
      ...(attempts === undefined ? {} : { attempts }),
    });
    let envelope: z.infer<typeof RpcEnvelope>;
    try {
      envelope = RpcEnvelope.parse(JSON.parse(response.text));
    } catch {
      if (response.status >= 500) throw new UpstreamUnavailableError(call, response.status, response.text);
      throw new UpstreamResponseError(call, [`not a JSON-RPC answer (HTTP ${response.status})`]);
    }
    if (envelope.error) {
      if (method === 'sendrawtransaction') {
        throw new BroadcastRejectedError(envelope.error.code, envelope.error.message, response.text);
      }
      throw new CoreRpcError(method, envelope.error.code, envelope.error.message);
    }
    const result = schema.safeParse(envelope.result);
    if (!result.success) {
      throw new UpstreamResponseError(
        call,
        result.error.issues.slice(0, 10).map((i) => `${i.path.join('.')}: ${i.message}`),
      );
    }
    return result.data;
  }

  /**
   * Several calls in one JSON-RPC batch (one HTTP request, as Core accepts): each answer is its
   * result, or the {@link CoreRpcError} of that call alone.
   * @throws UpstreamUnavailableError / UpstreamResponseError when the batch as a whole fails
   */
  async function rpcBatch(calls: readonly { method: string; params: unknown[] }[]): Promise<unknown[]> {
    const first = nextId;
    nextId += calls.length;
    const body = JSON.stringify(
      calls.map((c, i) => ({ jsonrpc: '1.0', id: first + i, method: c.method, params: c.params })),
    );
    const call = { upstream: 'bitcoin-core', operation: `batch(${calls.map((c) => c.method).join(',')})` };
    const response = await http.request({
      method: 'POST',
      path: '/',
      body,
      contentType: 'application/json',
      passStatuses: [400, 404, 500],
    });
    let envelopes: z.infer<typeof RpcEnvelope>[];
    try {
      envelopes = z.array(RpcEnvelope.extend({ id: z.unknown() })).parse(JSON.parse(response.text));
    } catch {
      if (response.status >= 500) throw new UpstreamUnavailableError(call, response.status, response.text);
      throw new UpstreamResponseError(call, [`not a JSON-RPC batch answer (HTTP ${response.status})`]);
    }
    const byId = new Map(envelopes.map((e) => [(e as { id: unknown }).id, e]));
    return calls.map((c, i) => {
      const envelope = byId.get(first + i);
      if (!envelope) return new UpstreamResponseError(call, [`no answer to call ${first + i}`]);
      return envelope.error
        ? new CoreRpcError(c.method, envelope.error.code, envelope.error.message)
        : envelope.result;
    });
  }

  const client = {
    snapshotSchema: BITCOIN_CORE_SNAPSHOT_SCHEMA,
    source,
    /** Any RPC method, result checked against `schema`. */
    call: rpc,
    /** Several calls in one JSON-RPC batch. */
    batch: rpcBatch,
    /**
     * The tip height and `estimatesmartfee` for each target in one batch request; a target Core
     * cannot estimate (an `errors` answer, or an RPC error) is undefined.
     */
    estimateSmartFees: async (
      targets: readonly number[],
      estimateMode: EstimateMode = mode,
    ): Promise<{ tipHeight: number; estimates: (SmartFeeEstimate | undefined)[] }> => {
      const [count, ...answers] = await rpcBatch([
        { method: 'getblockcount', params: [] },
        ...targets.map((target) => ({ method: 'estimatesmartfee', params: [target, estimateMode] })),
      ]);
      const height = z.number().int().min(0).safeParse(count);
      if (!height.success) {
        throw count instanceof Error
          ? count
          : new UpstreamResponseError({ upstream: 'bitcoin-core', operation: 'getblockcount' }, [
              'not a height',
            ]);
      }
      // Every call refused (warming up, -28): the node is down for estimates, not just unsure.
      if (answers.length > 0 && answers.every((answer) => answer instanceof Error)) throw answers[0];
      const estimates = answers.map((answer) => {
        const parsed = SmartFeeWire.safeParse(answer);
        if (!parsed.success || parsed.data.feerate === undefined) return undefined;
        return {
          satPerVb: btcPerKvbToSatPerVb(parsed.data.feerate),
          blocks: parsed.data.blocks,
          errors: parsed.data.errors ?? [],
        };
      });
      return { tipHeight: height.data, estimates };
    },
    /** estimatesmartfee target [mode]. */
    estimateSmartFee: async (
      target: number,
      estimateMode: EstimateMode = mode,
    ): Promise<SmartFeeEstimate> => {
      const r = await rpc('estimatesmartfee', [target, estimateMode], SmartFeeWire);
      return {
        satPerVb: r.feerate === undefined ? undefined : btcPerKvbToSatPerVb(r.feerate),
        blocks: r.blocks,
        errors: r.errors ?? [],
      };
    },
    /** getmempoolinfo. */
    getMempoolInfo: () => rpc('getmempoolinfo', [], MempoolInfoWire),
    /** getblockstats hash_or_height (integer rates in sat/vB, amounts in sats). */
    getBlockStats: (hashOrHeight: string | number) => rpc('getblockstats', [hashOrHeight], BlockStatsWire),
    /** getblockcount. */
    getBlockCount: () => rpc('getblockcount', [], z.number().int().min(0)),
    /** getblockhash height. */
    getBlockHash: (height: number) => rpc('getblockhash', [height], z.string().regex(/^[0-9a-f]{64}$/)),
    /** getblocktemplate (segwit rules): the next block Core would mine, with its transactions. */
    getBlockTemplate: () => rpc('getblocktemplate', [{ rules: ['segwit'] }], BlockTemplateWire),
    /** getbestblockhash then getblockheader: the tip's height, hash and time. */
    getTip: async () => {
      const hash = await rpc('getbestblockhash', [], z.string().regex(/^[0-9a-f]{64}$/));
      return rpc('getblockheader', [hash], BlockHeaderWire);
    },
    /**
     * testmempoolaccept [hex…] (maxfeerate in BTC/kvB; 0 lifts Core's limit). Never retried.
     * @throws CoreRpcError (-22 when a transaction cannot be decoded, -28 while warming up)
     */
    testMempoolAccept: (hexes: string[], options: { maxFeeRateBtcPerKvb?: number } = {}) =>
      rpc(
        'testmempoolaccept',
        options.maxFeeRateBtcPerKvb === undefined ? [hexes] : [hexes, options.maxFeeRateBtcPerKvb],
        z.array(z.looseObject({ txid: z.string().optional() })),
        1,
      ) as Promise<TestMempoolAcceptResult[]>,
    /**
     * sendrawtransaction hex [maxfeerate] (BTC/kvB; 0 lifts Core's 0.10 limit). Never retried.
     * @throws BroadcastRejectedError
     */
    sendRawTransaction: async (
      hex: string,
      options: { maxFeeRateBtcPerKvb?: number } = {},
    ): Promise<{ txid: string }> => ({
      txid: await rpc(
        'sendrawtransaction',
        options.maxFeeRateBtcPerKvb === undefined ? [hex] : [hex, options.maxFeeRateBtcPerKvb],
        z.string().regex(/^[0-9a-f]{64}$/),
        1,
      ),
    }),
    /** Alias used by the broadcast resource, same as {@link sendRawTransaction}. */
    broadcastTransaction: async (hex: string): Promise<{ txid: string }> => ({
      txid: await rpc('sendrawtransaction', [hex], z.string().regex(/^[0-9a-f]{64}$/), 1),
    }),
    fetchTipHeight: (): Promise<number> => rpc('getblockcount', [], z.number().int().min(0)),
    /**
     * Tiers from estimatesmartfee (targets 1, 3, 6, 144 in the configured mode), minimum from
     * max(mempoolminfee, minrelaytxfee); a missing estimate takes the next shorter tier's rate.
     */
    fetchTiers: async (): Promise<{ tiers: FeeTiers; repaired: boolean; mempool: MempoolInfo }> => {
      const [fastest, halfHour, hour, economy, mempool] = await Promise.all([
        client.estimateSmartFee(CORE_TIER_TARGETS.fastest),
        client.estimateSmartFee(CORE_TIER_TARGETS.half_hour),
        client.estimateSmartFee(CORE_TIER_TARGETS.hour),
        client.estimateSmartFee(CORE_TIER_TARGETS.economy),
        client.getMempoolInfo(),
      ]);
      if (fastest.satPerVb === undefined) {
        throw new UpstreamResponseError({ upstream: 'bitcoin-core', operation: 'estimatesmartfee' }, [
          `no estimate for target ${CORE_TIER_TARGETS.fastest}: ${fastest.errors.join(', ') || 'unknown'}`,
        ]);
      }
      const h = halfHour.satPerVb ?? fastest.satPerVb;
      const o = hour.satPerVb ?? h;
      const e = economy.satPerVb ?? o;
      const minimum = Math.max(
        btcPerKvbToSatPerVb(mempool.mempoolminfee),
        btcPerKvbToSatPerVb(mempool.minrelaytxfee),
      );
      const ordered = repairTierOrder({
        fastest: fastest.satPerVb,
        half_hour: h,
        hour: o,
        economy: e,
        minimum,
      });
      return { ...ordered, mempool };
    },
    /** Fetches and validates a snapshot. Mempool vsize is getmempoolinfo `bytes` (virtual bytes). */
    fetchSnapshot: async (opts: { now?: () => number } = {}): Promise<RecordedSnapshot> => {
      const [{ tiers, repaired, mempool }, tip] = await Promise.all([
        client.fetchTiers(),
        client.fetchTipHeight(),
      ]);
      return validateFeeSnapshot({
        snapshot_schema: BITCOIN_CORE_SNAPSHOT_SCHEMA,
        source,
        fetched_at: new Date((opts.now ?? Date.now)()).toISOString(),
        tip_height: tip,
        tiers,
        mempool: {
          count: mempool.size,
          vsize: mempool.bytes,
          ...(mempool.total_fee === undefined ? {} : { total_fee: Math.round(mempool.total_fee * 1e8) }),
        },
        projected_blocks: [],
        repaired,
      });
    },
  } satisfies FeeSnapshotSource & Record<string, unknown>;
  return client;
}
export type BitcoinCoreClient = ReturnType<typeof createBitcoinCoreClient>;
