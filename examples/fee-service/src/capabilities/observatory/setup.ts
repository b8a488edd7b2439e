import type { ScenarioName } from '../../simulator/scenarios';
import type { BitcoinCoreClient } from '../../upstreams/bitcoin-core';
import type { EsploraClient } from '../../upstreams/esplora';
import type { MempoolSpaceClient } from '../../upstreams/mempool-space';
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
 * Where the observatory reads blocks: mempool.space (15 blocks with their fee ranges per request),
 * else Bitcoin Core (each block's transactions; `getblockstats` when it cannot serve them). Esplora
 * alone would need 25 transactions a request for every block: undefined.
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
 * The weather of the simulated history when the service starts on the calm scenario: quiet hours,
 * a fee spike, a backlog that builds and clears, a second spike. Estimators part ways exactly
 * there (a mempool-based one is caught by a spike, a history-based one lags and then overpays),
 * so the scoreboard has something to tell. Hours from the start of the history.
 */
export const HISTORY_WEATHER: readonly { fromHour: number; scenario: ScenarioName }[] = [
  { fromHour: 0, scenario: 'calm' },
  { fromHour: 7, scenario: 'spike' },
  { fromHour: 9, scenario: 'calm' },
  { fromHour: 16, scenario: 'backlog' },
  { fromHour: 20, scenario: 'calm' },
  { fromHour: 27, scenario: 'spike' },
  { fromHour: 28.5, scenario: 'calm' },
];

/** The scenario of the weather at `hours` after the start. */
export function weatherAt(hours: number): ScenarioName {
  let scenario: ScenarioName = 'calm';
  for (const phase of HISTORY_WEATHER) if (hours >= phase.fromHour) scenario = phase.scenario;
  return scenario;
}

/**
 * Runs the embedded simulator from its start (in the past) up to the present, one poll of the
 * recorder per `pollEveryMs` of simulated time, through the simulator's real dialects. With
 * `weather`, the scenario follows {@link HISTORY_WEATHER} and returns to `finalScenario` at the end.
 */
export async function recordHistoryUntil(options: {
  simulator: FastForwardable & { nowMs(): number; setScenario(name: ScenarioName): void };
  recorder: Recorder;
  untilMs: () => number;
  pollEveryMs: number;
  weather?: { startMs: number; finalScenario: ScenarioName };
}): Promise<{ blocks: number; ticks: number }> {
  const { simulator, recorder, pollEveryMs, weather } = options;
  const start = simulator.tipHeight();
  let ticks = 0;
  let scenario: ScenarioName | undefined;
  await recorder.tick();
  while (simulator.nowMs() + pollEveryMs <= options.untilMs()) {
    if (weather) {
      const next = weatherAt((simulator.nowMs() - weather.startMs) / 3_600_000);
      if (next !== scenario) simulator.setScenario(next);
      scenario = next;
    }
    simulator.advance(pollEveryMs);
    await recorder.tick();
    ticks += 1;
  }
  if (weather) simulator.setScenario(weather.finalScenario);
  return { blocks: simulator.tipHeight() - start, ticks };
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
