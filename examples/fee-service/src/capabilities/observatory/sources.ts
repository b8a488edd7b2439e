import { toMilliSatPerVb } from '../../domain/fee-math';
import type { BitcoinCoreClient, EstimateMode } from '../../upstreams/bitcoin-core';
import type { EsploraClient } from '../../upstreams/esplora';
import type { MempoolSpaceClient } from '../../upstreams/mempool-space';

/**
 * The estimators the observatory scores, each read through its real upstream dialect. A poll
 * answers the source's own tip height and a rate per target it quoted; a target it did not quote
 * (a missing Esplora key, a Core estimate with `errors`) is simply absent, and counts against its
 * availability. Nothing is filled in: no nearest-target fallback, no repair of non-monotonic
 * answers — the observatory judges what the source said.
 */

/** Highest believable rate (`docs/fee-rules.md#snapshot-validation`): anything above is discarded as invalid. */
export const MAX_PLAUSIBLE_RATE_SAT_VB = 10_000;

/** One poll of a source. */
export interface SourcePoll {
  tipHeight: number;
  /** target → msat/vB. */
  rates: Map<number, number>;
}

export interface EstimateSource {
  /** Stable name in the history and the scoreboard (e.g. `mempool.space`, `core-economical`). */
  name: string;
  /** Targets the source is scored on: a poll without one of them lowers its availability. */
  targets: readonly number[];
  poll(): Promise<SourcePoll>;
}

/** mempool.space tiers as targets (`docs/fee-rules.md#tier-targets`); `minimum` is a floor, not a target. */
export const MEMPOOL_TIER_TARGETS = { fastestFee: 1, halfHourFee: 3, hourFee: 6, economyFee: 144 } as const;

/** Targets asked of Esplora and Core by default: the tiers' horizons plus 2, 12 and 24 blocks. */
export const DEFAULT_SCORED_TARGETS = [1, 2, 3, 6, 12, 24, 144] as const;

/** A valid rate in msat/vB, or undefined. */
export function validRate(rate: unknown): number | undefined {
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > MAX_PLAUSIBLE_RATE_SAT_VB) {
    return undefined;
  }
  return toMilliSatPerVb(rate);
}

/**
 * mempool.space's recommended tiers (`precise`, three decimals, or `recommended`, integers).
 * @example const source = mempoolSpaceSource({ client: createMempoolSpaceClient({ baseUrl }) });
 */
export function mempoolSpaceSource(options: {
  client: MempoolSpaceClient;
  name?: string;
  endpoint?: 'precise' | 'recommended';
}): EstimateSource {
  const { client } = options;
  const endpoint = options.endpoint ?? 'precise';
  return {
    name: options.name ?? 'mempool.space',
    targets: Object.values(MEMPOOL_TIER_TARGETS),
    async poll() {
      const [fees, tipHeight] = await Promise.all([
        endpoint === 'precise' ? client.fetchPreciseFees() : client.fetchRecommendedFees(),
        client.fetchTipHeight(),
      ]);
      const rates = new Map<number, number>();
      for (const [tier, target] of Object.entries(MEMPOOL_TIER_TARGETS)) {
        const rate = validRate(fees[tier as keyof typeof MEMPOOL_TIER_TARGETS]);
        if (rate !== undefined) rates.set(target, rate);
      }
      return { tipHeight, rates };
    },
  };
}

/** Esplora `/fee-estimates`: the raw rate of each target asked for, as received. */
export function esploraSource(options: {
  client: EsploraClient;
  name?: string;
  targets?: readonly number[];
}): EstimateSource {
  const { client } = options;
  const targets = options.targets ?? DEFAULT_SCORED_TARGETS;
  return {
    name: options.name ?? 'esplora',
    targets,
    async poll() {
      const [{ raw }, tipHeight] = await Promise.all([client.fetchFeeEstimates(), client.fetchTipHeight()]);
      const rates = new Map<number, number>();
      for (const target of targets) {
        const rate = validRate(raw.get(target));
        if (rate !== undefined) rates.set(target, rate);
      }
      return { tipHeight, rates };
    },
  };
}

/** Bitcoin Core `estimatesmartfee target mode` for each target, in one mode. */
export function bitcoinCoreSource(options: {
  client: BitcoinCoreClient;
  mode: EstimateMode;
  name?: string;
  targets?: readonly number[];
}): EstimateSource {
  const { client, mode } = options;
  const targets = options.targets ?? DEFAULT_SCORED_TARGETS;
  return {
    name: options.name ?? `core-${mode}`,
    targets,
    async poll() {
      // One JSON-RPC batch: the tip and every target, as one consistent reading.
      const { tipHeight, estimates } = await client.estimateSmartFees(targets, mode);
      const rates = new Map<number, number>();
      targets.forEach((target, i) => {
        const rate = validRate(estimates[i]?.satPerVb);
        if (rate !== undefined) rates.set(target, rate);
      });
      return { tipHeight, rates };
    },
  };
}
