import type { BitcoinCoreClient } from '../upstreams/bitcoin-core';
import type { EsploraClient } from '../upstreams/esplora';
import type { MempoolSpaceClient } from '../upstreams/mempool-space';
import { bitcoinCoreChain, type ChainReader, mempoolSpaceChain } from './chain';
import type { Recorder } from './recorder';
import { bitcoinCoreSource, type EstimateSource, esploraSource, mempoolSpaceSource } from './sources';

/** The upstream clients a deployment has (any subset). */
export interface ObservatoryUpstreams {
  mempool?: MempoolSpaceClient;
  esplora?: EsploraClient;
  core?: BitcoinCoreClient;
}

/**
 * Every source the observatory scores, from the configured upstreams: mempool.space's tiers,
 * Esplora's targets, and Core's `estimatesmartfee` in both modes.
 */
export function observatorySources(upstreams: ObservatoryUpstreams): EstimateSource[] {
  const sources: EstimateSource[] = [];
  if (upstreams.mempool) sources.push(mempoolSpaceSource({ client: upstreams.mempool }));
  if (upstreams.esplora) sources.push(esploraSource({ client: upstreams.esplora }));
  if (upstreams.core) {
    sources.push(bitcoinCoreSource({ client: upstreams.core, mode: 'economical' }));
    sources.push(bitcoinCoreSource({ client: upstreams.core, mode: 'conservative' }));
  }
  return sources;
}

/**
 * Where the observatory reads blocks: mempool.space (15 blocks with fee ranges per request), else
 * Bitcoin Core (`getblockstats`). Esplora alone has no per-block fee statistics: undefined.
 */
export function observatoryChain(upstreams: ObservatoryUpstreams): ChainReader | undefined {
  if (upstreams.mempool) return mempoolSpaceChain(upstreams.mempool);
  if (upstreams.core) return bitcoinCoreChain(upstreams.core);
  return undefined;
}

/** What runs history forward: a simulator's clock and chain (see `simulator/server.ts`). */
export interface FastForwardable {
  advance(ms: number): void;
  tipHeight(): number;
}

/**
 * Runs a simulated chain forward in fast time while the recorder polls it through its real
 * dialects: at least `blocks` blocks, one poll per `pollEveryMs` of simulated time.
 * @returns the blocks mined and the ticks run
 */
export async function recordFastForward(options: {
  simulator: FastForwardable;
  recorder: Recorder;
  blocks: number;
  pollEveryMs: number;
  /** Stops after this many ticks even if fewer blocks came (exponential intervals). Default 4 × expected. */
  maxTicks?: number;
}): Promise<{ blocks: number; ticks: number }> {
  const { simulator, recorder, blocks, pollEveryMs } = options;
  const start = simulator.tipHeight();
  const maxTicks = options.maxTicks ?? Math.ceil((4 * blocks * 600_000) / pollEveryMs);
  let ticks = 0;
  await recorder.tick();
  while (simulator.tipHeight() - start < blocks && ticks < maxTicks) {
    simulator.advance(pollEveryMs);
    await recorder.tick();
    ticks += 1;
  }
  return { blocks: simulator.tipHeight() - start, ticks };
}
