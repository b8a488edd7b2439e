import { roundRate3 } from '../domain/fee-math';
import type { FeeTiers } from '../domain/types';
import { ESPLORA_SNAPSHOT_SCHEMA } from '../snapshot/schemas';
import type { FeeSnapshotSource, RecordedSnapshot } from '../snapshot/types';
import { repairTierOrder, validateFeeSnapshot } from '../snapshot/validate';
import { parseBroadcastError, UpstreamResponseError } from './errors';
import { createUpstreamHttp, publicUrl, type UpstreamHttpOptions } from './http';
import {
  EsploraBlockWire,
  EsploraTxWire,
  FeeEstimatesWire,
  MempoolWire,
  parseHashBody,
  parseIntegerBody,
  parseJsonBody,
} from './wire';

/** Confirmation target, in blocks, read for each tier. `minimum` takes the longest target offered. */
export const ESPLORA_TIER_TARGETS = { fastest: 1, half_hour: 3, hour: 6, economy: 144 } as const;

/** Parsed `/fee-estimates`: target (blocks) → rate, ordered by target, repaired to be non-increasing. */
export interface FeeEstimates {
  /** Target → sat/vB after the running-minimum repair. */
  estimates: Map<number, number>;
  /** The rates exactly as received. */
  raw: Map<number, number>;
  /** True when a longer target quoted more than a shorter one and was lowered. */
  repaired: boolean;
}

export interface EsploraClientOptions extends UpstreamHttpOptions {
  /** Esplora API base, e.g. https://blockstream.info/api or http://host/api of a mempool instance. */
  baseUrl: string;
}

/**
 * Reads the rate for a target: the exact key, else the nearest shorter target offered (its rate
 * confirms at least as fast), else the nearest longer one.
 */
export function rateForTarget(estimates: Map<number, number>, target: number): number | undefined {
  const exact = estimates.get(target);
  if (exact !== undefined) return exact;
  const targets = [...estimates.keys()].sort((a, b) => a - b);
  const shorter = targets.filter((t) => t < target).at(-1);
  if (shorter !== undefined) return estimates.get(shorter);
  const longer = targets.find((t) => t > target);
  return longer === undefined ? undefined : estimates.get(longer);
}

/** Repairs a target → rate map by a running minimum from short to long targets. */
export function repairEstimates(raw: Map<number, number>): FeeEstimates {
  const estimates = new Map<number, number>();
  let running = Number.POSITIVE_INFINITY;
  let repaired = false;
  for (const target of [...raw.keys()].sort((a, b) => a - b)) {
    const rate = roundRate3(raw.get(target)!);
    if (rate > running) repaired = true;
    running = Math.min(running, rate);
    estimates.set(target, running);
  }
  return { estimates, raw, repaired };
}

/**
 * Client of an Esplora HTTP API (Blockstream's, or the `/api` of a mempool instance, which answers
 * `/fee-estimates` with 203 — still a valid answer).
 * @example const esplora = createEsploraClient({ baseUrl: 'https://blockstream.info/api' });
 */
export function createEsploraClient(options: EsploraClientOptions) {
  if (typeof options?.baseUrl !== 'string' || options.baseUrl.length === 0) {
    throw new TypeError('invalid Esplora options: baseUrl is required');
  }
  const source = publicUrl(options.baseUrl);
  const http = createUpstreamHttp({ ...options, upstream: 'esplora', baseUrl: options.baseUrl });
  const call = (path: string, method = 'GET') => ({ upstream: 'esplora', operation: `${method} ${path}` });

  const client = {
    snapshotSchema: ESPLORA_SNAPSHOT_SCHEMA,
    source,
    /** GET /fee-estimates, parsed and repaired. @throws UpstreamResponseError when no usable key */
    fetchFeeEstimates: async (): Promise<FeeEstimates> => {
      const path = '/fee-estimates';
      const body = parseJsonBody(call(path), (await http.request({ path })).text, FeeEstimatesWire);
      const raw = new Map<number, number>();
      for (const [key, value] of Object.entries(body)) {
        const target = Number(key);
        if (target >= 1 && Number.isFinite(value) && value >= 0) raw.set(target, value);
      }
      if (raw.size === 0) throw new UpstreamResponseError(call(path), ['no usable confirmation target']);
      return repairEstimates(raw);
    },
    /** GET /mempool. */
    fetchMempool: async () =>
      parseJsonBody(call('/mempool'), (await http.request({ path: '/mempool' })).text, MempoolWire),
    /** GET /blocks/tip/height. */
    fetchTipHeight: async (): Promise<number> =>
      parseIntegerBody(call('/blocks/tip/height'), (await http.request({ path: '/blocks/tip/height' })).text),
    /** GET /block/:hash. */
    fetchBlock: async (hash: string) => {
      const path = `/block/${encodeURIComponent(hash)}`;
      return parseJsonBody(call(path), (await http.request({ path })).text, EsploraBlockWire);
    },
    /** GET /block-height/:height → hash. */
    fetchBlockHash: async (height: number) => {
      const path = `/block-height/${height}`;
      return parseHashBody(call(path), (await http.request({ path })).text);
    },
    /** GET /tx/:txid. */
    fetchTransaction: async (txid: string) => {
      const path = `/tx/${encodeURIComponent(txid)}`;
      return parseJsonBody(call(path), (await http.request({ path })).text, EsploraTxWire);
    },
    /** POST /tx. @throws BroadcastRejectedError */
    broadcastTransaction: async (hex: string) => {
      const response = await http.request({
        method: 'POST',
        path: '/tx',
        body: hex,
        passStatuses: [400],
        attempts: 1,
      });
      if (response.status === 400) throw parseBroadcastError(response.text);
      return { txid: parseHashBody(call('/tx', 'POST'), response.text) };
    },
    /** Tiers from the repaired estimates (targets 1, 3, 6, 144; minimum from the longest target). */
    fetchTiers: async (): Promise<{ tiers: FeeTiers; repaired: boolean }> => {
      const { estimates, repaired } = await client.fetchFeeEstimates();
      const longest = Math.max(...estimates.keys());
      const pick = (target: number) => rateForTarget(estimates, target)!;
      const tiers: FeeTiers = {
        fastest: pick(ESPLORA_TIER_TARGETS.fastest),
        half_hour: pick(ESPLORA_TIER_TARGETS.half_hour),
        hour: pick(ESPLORA_TIER_TARGETS.hour),
        economy: pick(ESPLORA_TIER_TARGETS.economy),
        minimum: estimates.get(longest)!,
      };
      const ordered = repairTierOrder(tiers);
      return { tiers: ordered.tiers, repaired: repaired || ordered.repaired };
    },
    /** Fetches and validates a snapshot (no projected blocks in this dialect). */
    fetchSnapshot: async (opts: { now?: () => number } = {}): Promise<RecordedSnapshot> => {
      const [{ tiers, repaired }, mempool, tip] = await Promise.all([
        client.fetchTiers(),
        client.fetchMempool(),
        client.fetchTipHeight(),
      ]);
      return validateFeeSnapshot({
        snapshot_schema: ESPLORA_SNAPSHOT_SCHEMA,
        source,
        fetched_at: new Date((opts.now ?? Date.now)()).toISOString(),
        tip_height: tip,
        tiers,
        mempool:
          mempool.total_fee === undefined
            ? { count: mempool.count, vsize: mempool.vsize }
            : { count: mempool.count, vsize: mempool.vsize, total_fee: mempool.total_fee },
        projected_blocks: [],
        repaired,
      });
    },
  } satisfies FeeSnapshotSource & Record<string, unknown>;
  return client;
}
export type EsploraClient = ReturnType<typeof createEsploraClient>;
