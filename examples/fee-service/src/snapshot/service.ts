import { FeeServiceError } from '../domain/errors';
import type { Evidence } from '../domain/types';
import { type Clock, systemClock } from './clock';
import type { FeeSnapshotSource, RecordedSnapshot } from './types';
import { validateFeeSnapshot } from './validate';

/** No validated snapshot is recent enough to serve; the route answers 503. */
export class NoValidatedSnapshotError extends FeeServiceError {
  constructor(
    readonly reason: 'none' | 'expired',
    readonly lastError?: unknown,
  ) {
    super(
      'NO_VALIDATED_SNAPSHOT',
      reason === 'none' ? 'no validated snapshot' : 'no validated snapshot (the last one is too old)',
      { retryable: true, cause: lastError },
    );
  }
}

export interface SnapshotServiceOptions {
  /** The upstream client (mempool.space, Esplora or Core). */
  upstream: FeeSnapshotSource;
  /** Poll period. Default 10,000 ms. */
  intervalMs?: number;
  /** Age up to which a snapshot is fresh. Default 30,000 ms (docs/fee-service-contract.md#limits). */
  freshMs?: number;
  /** Age up to which a snapshot is still served as a stale fallback. Default 120,000 ms. */
  fallbackMs?: number;
  /** Injectable clock. Default the system clock. */
  clock?: Clock;
  /** Called with every failed poll (a log hook; no console in library code). */
  onError?: (error: unknown) => void;
}

export const SNAPSHOT_SERVICE_DEFAULTS = {
  intervalMs: 10_000,
  freshMs: 30_000,
  fallbackMs: 120_000,
} as const;

/** The snapshot to serve now, with its freshness. */
export interface CurrentSnapshot {
  snapshot: RecordedSnapshot;
  /** Whole seconds since the upstream answered. */
  age_seconds: number;
  /** Older than `freshMs`, or a newer block was seen since. */
  stale: boolean;
  evidence: Evidence;
}

export type PollOutcome = { ok: true; snapshot: RecordedSnapshot } | { ok: false; error: unknown };

export interface SnapshotService {
  /** Polls now and then every `intervalMs` on the clock. Idempotent. */
  start(): void;
  /** Stops polling; an in-flight poll still finishes. */
  stop(): void;
  /** Runs one poll; a bad answer is discarded and the previous valid snapshot stays. */
  poll(): Promise<PollOutcome>;
  /** Resolves when no poll is running. */
  settled(): Promise<void>;
  /**
   * The snapshot to serve at `now` (epoch ms, default the clock's now).
   * @throws NoValidatedSnapshotError when none was ever validated or the last is older than `fallbackMs`
   */
  current(now?: number): CurrentSnapshot;
  /** The last validated snapshot regardless of age, if any. */
  latest(): RecordedSnapshot | undefined;
  /** Tells the service a block at `height` exists (from the tip probe or another component). */
  noteTipHeight(height: number): void;
  /** The error of the last failed poll, cleared by a successful one. */
  lastError(): unknown;
}

/**
 * Creates the poller and store of validated fee snapshots.
 * @example
 * const service = createSnapshotService({ upstream: createMempoolSpaceClient({ baseUrl }) });
 * service.start();
 * const reading = service.current(); // throws NoValidatedSnapshotError → 503
 */
export function createSnapshotService(options: SnapshotServiceOptions): SnapshotService {
  const intervalMs = options.intervalMs ?? SNAPSHOT_SERVICE_DEFAULTS.intervalMs;
  const freshMs = options.freshMs ?? SNAPSHOT_SERVICE_DEFAULTS.freshMs;
  const fallbackMs = options.fallbackMs ?? SNAPSHOT_SERVICE_DEFAULTS.fallbackMs;
  const clock = options.clock ?? systemClock;
  const problems: string[] = [];
  if (!options.upstream || typeof options.upstream.fetchSnapshot !== 'function') {
    problems.push('upstream must provide fetchSnapshot()');
  }
  if (!(intervalMs > 0)) problems.push('intervalMs must be > 0');
  if (!(freshMs >= 0)) problems.push('freshMs must be ≥ 0');
  if (!(fallbackMs >= freshMs)) problems.push('fallbackMs must be ≥ freshMs');
  if (problems.length > 0) throw new TypeError(`invalid snapshot service options: ${problems.join('; ')}`);

  const { upstream } = options;
  let latest: RecordedSnapshot | undefined;
  /** `Date.parse(latest.fetched_at)`, parsed once per snapshot rather than on every read. */
  let latestFetchedMs = Number.NaN;
  let highestTip: number | undefined;
  let lastError: unknown;
  let inFlight: Promise<PollOutcome> | undefined;
  let timer: unknown;
  let running = false;

  const noteTipHeight = (height: number) => {
    if (Number.isInteger(height) && height >= 0 && (highestTip === undefined || height > highestTip)) {
      highestTip = height;
    }
  };

  async function pollOnce(): Promise<PollOutcome> {
    try {
      // Re-validate: a custom upstream may not have.
      const snapshot = validateFeeSnapshot(await upstream.fetchSnapshot({ now: () => clock.now() }));
      latest = snapshot;
      latestFetchedMs = Date.parse(snapshot.fetched_at);
      lastError = undefined;
      if (snapshot.tip_height !== null) noteTipHeight(snapshot.tip_height);
      return { ok: true, snapshot };
    } catch (error) {
      lastError = error;
      options.onError?.(error);
      if (upstream.fetchTipHeight) {
        try {
          noteTipHeight(await upstream.fetchTipHeight());
        } catch {
          // the probe is best effort
        }
      }
      return { ok: false, error };
    }
  }

  function poll(): Promise<PollOutcome> {
    if (!inFlight) {
      inFlight = pollOnce().finally(() => {
        inFlight = undefined;
      });
    }
    return inFlight;
  }

  function schedule() {
    if (!running) return;
    timer = clock.setTimeout(() => {
      void poll().finally(schedule);
    }, intervalMs);
  }

  return {
    start() {
      if (running) return;
      running = true;
      void poll().finally(schedule);
    },
    stop() {
      running = false;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
    poll,
    async settled() {
      while (inFlight) await inFlight;
    },
    current(now = clock.now()) {
      if (!latest) throw new NoValidatedSnapshotError('none', lastError);
      const ageMs = Math.max(0, now - latestFetchedMs);
      if (ageMs > fallbackMs) throw new NoValidatedSnapshotError('expired', lastError);
      const newerBlock =
        highestTip !== undefined && latest.tip_height !== null && highestTip > latest.tip_height;
      const stale = ageMs > freshMs || newerBlock;
      return {
        snapshot: latest,
        age_seconds: Math.floor(ageMs / 1000),
        stale,
        evidence: stale ? 'degraded' : 'recorded',
      };
    },
    latest: () => latest,
    noteTipHeight,
    lastError: () => lastError,
  };
}
