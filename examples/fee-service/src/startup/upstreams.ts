import type { Logger } from 'pino';
import { type BitcoinUpstreams, createBitcoinUpstreams, primarySource } from '../capabilities/bitcoin';
import type { ServiceConfig } from '../config';
import { type MempoolSimulator, startMempoolSimulator } from '../simulator/server';
import type { Clock } from '../snapshot/clock';
import { createSnapshotService, type SnapshotService } from '../snapshot/service';
import type { CleanupStack } from './cleanup';
import { listenOn } from './ports';

export interface StartedUpstreams {
  /** The embedded simulator, when no upstream URL is configured. */
  simulator: MempoolSimulator | undefined;
  /** The service started that simulator (its time is the service's to move); not a caller's. */
  ownsSimulator: boolean;
  bitcoin: BitcoinUpstreams;
  /** The snapshot poller of the primary upstream, after its first poll. */
  snapshots: SnapshotService;
}

/**
 * Step 1: the Bitcoin upstreams (the configured URLs, else the embedded deterministic simulator
 * serving all three dialects) and the snapshot poller of the primary one, polled once before the
 * service listens.
 */
export async function startUpstreams(
  config: ServiceConfig,
  overrides: { simulator?: MempoolSimulator; clock?: Clock },
  cleanups: CleanupStack,
  logger: Logger,
): Promise<StartedUpstreams> {
  const embedded = !config.sources.mempool && !config.sources.esplora && !config.sources.core;
  let simulator = embedded ? overrides.simulator : undefined;
  if (embedded && !simulator) {
    const port = config.embeddedPorts.simulator;
    const started = await listenOn('SIMULATOR_PORT', port, () =>
      startMempoolSimulator({
        scenario: config.simulator.scenario,
        seed: config.simulator.seed,
        timeScale: config.simulator.timeScale,
        ...(port ? { port } : {}),
        // Starts in the past: the observatory's start-up step runs it forward to now. Without the
        // observatory nothing would, and every answer would show a chain hours behind the clock.
        ...(config.observatory.enabled && config.simulator.historyHours > 0
          ? { startMs: Date.now() - config.simulator.historyHours * 3_600_000 }
          : {}),
      }),
    );
    simulator = started;
    cleanups.push('simulator', () => started.close());
    logger.info(
      { url: started.url, scenario: config.simulator.scenario, seed: config.simulator.seed },
      'mempool simulator started',
    );
  }
  const bitcoin = createBitcoinUpstreams(config, simulator);
  const upstream = primarySource(bitcoin);
  const snapshots = createSnapshotService({
    upstream,
    intervalMs: config.snapshotIntervalMs,
    ...(overrides.clock ? { clock: overrides.clock } : {}),
    onError: (error) => logger.warn({ err: error, upstream: upstream.source }, 'snapshot poll failed'),
  });
  snapshots.start();
  cleanups.push('snapshots', async () => {
    snapshots.stop();
    await snapshots.settled();
  });
  await snapshots.settled();
  return { simulator, ownsSimulator: embedded && overrides.simulator === undefined, bitcoin, snapshots };
}
