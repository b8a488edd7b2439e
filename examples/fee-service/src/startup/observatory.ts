import type { Logger } from 'pino';
import type { HistoryStore } from '../capabilities/history/types';
import { createObservatory, type Observatory } from '../capabilities/observatory/observatory';
import { createRecorder, type Recorder } from '../capabilities/observatory/recorder';
import { observatoryChain, observatorySources, recordHistoryUntil } from '../capabilities/observatory/setup';
import type { ServiceConfig } from '../config';
import type { CleanupStack } from './cleanup';
import type { StartedUpstreams } from './upstreams';

/** Simulated time between two recorder polls while the history is run forward at start-up. */
export const HISTORY_POLL_EVERY_MS = 1_200_000;

export interface StartedObservatory {
  observatory: Observatory;
  recorder: Recorder;
  history: HistoryStore;
  /** What the start-up run of the simulated chain recorded, when there was one. */
  history_run?: { blocks: number; ticks: number; ms: number };
}

/**
 * Step 2 (beside the payment side): the fee observatory. On the history the stores step opened and
 * migrated (`startup/stores.ts`; in memory for a simulated production run), starts the
 * recorder as a background job over every configured source, and — when the service runs its own
 * simulator — first runs the simulator's chain from its start in the past up to now in fast time
 * while the recorder records it through the real dialects, so the observatory answers with scored
 * history on the first request. Undefined when it is turned off (`OBSERVATORY_ENABLED=false`) or
 * no configured upstream gives per-block fee statistics (mempool.space or Core): the
 * observatory's resources are then published paused.
 */
export async function startObservatory(
  config: ServiceConfig,
  upstreams: StartedUpstreams,
  history: HistoryStore | undefined,
  cleanups: CleanupStack,
  logger: Logger,
): Promise<StartedObservatory | undefined> {
  if (!config.observatory.enabled || !history) return undefined;
  const chain = observatoryChain(upstreams.bitcoin);
  if (!chain) {
    logger.warn('the observatory needs mempool.space or Bitcoin Core for block statistics: not started');
    return undefined;
  }
  const simulator = upstreams.simulator;
  // With the embedded simulator every time is the simulator's (it may run faster than the clock).
  const now = simulator ? () => simulator.model.nowMs : Date.now;
  let observatory: Observatory | undefined;
  const sources = observatorySources(upstreams.bitcoin);
  const recorder = createRecorder({
    history,
    chain,
    sources,
    intervalMs: config.observatory.intervalMs,
    retentionMs: config.observatory.retentionHours * 3_600_000,
    now,
    onWrite: () => void observatory?.refresh().catch(() => {}),
    onError: (error) => logger.warn({ err: error }, 'observatory recorder tick failed'),
  });
  observatory = createObservatory({ history, now, sources });
  cleanups.push('observatory recorder', () => recorder.stop());

  let run: StartedObservatory['history_run'];
  if (simulator && upstreams.ownsSimulator && config.simulator.historyHours > 0) {
    const started = performance.now();
    const ran = await recordHistoryUntil({
      simulator: {
        advance: (ms) => simulator.advance(ms),
        tipHeight: () => simulator.model.tipHeight(),
        nowMs: () => simulator.model.nowMs,
        setScenario: (name) => simulator.setScenario(name),
      },
      recorder,
      untilMs: Date.now,
      pollEveryMs: HISTORY_POLL_EVERY_MS,
      ...(config.simulator.scenario === 'calm'
        ? { weather: { startMs: simulator.model.startMs, finalScenario: config.simulator.scenario } }
        : {}),
    });
    run = { ...ran, ms: Math.round(performance.now() - started) };
    logger.info(run, 'observatory history recorded from the simulated chain');
    // The chain moved on during the run: the first snapshot is from its start.
    await upstreams.snapshots.poll();
  }
  await observatory.refresh();
  recorder.start();
  return { observatory, recorder, history, ...(run ? { history_run: run } : {}) };
}
