import { randomUUID } from 'node:crypto';
import type { HistoryStore, HistoryWriter } from '../history/types';
import type { ChainReader } from './chain';
import { connectBlocks, disconnectFrom, type PollOutcome, recordPolls } from './recorder-steps';
import { HOUR_MS, ScoreBook } from './score-book';
import type { EstimateSource } from './sources';

/**
 * The recorder: a background job that, on every tick, follows the chain (new blocks, reorgs),
 * polls every source, records what they quoted and judges each estimate once its window's blocks
 * exist. Of several instances sharing one history only the holder of the recorder lease records;
 * the others follow (and take over within one lease TTL if the holder dies).
 */

export interface RecorderOptions {
  history: HistoryStore;
  chain: ChainReader;
  sources: readonly EstimateSource[];
  /** Poll period. Default 60,000 ms. */
  intervalMs?: number;
  /** Lease time-to-live; renewed on every write. Default 3 × intervalMs (at least 15 s). */
  leaseTtlMs?: number;
  /** Blocks read before the first tick's tip, so block-stats has a history. Default 144. */
  backfillBlocks?: number;
  /** Blocks recorded per tick at most (catch-up after a long stop goes over several ticks). Default 500. */
  maxBlocksPerTick?: number;
  /** Deepest reorg followed; a deeper fork re-records that many blocks. Default 100. */
  maxReorgDepth?: number;
  /** History kept. Default 30 days. */
  retentionMs?: number;
  /** Clock of the observations (the simulator's while it runs history forward). Default Date.now. */
  now?: () => number;
  /** This instance's name in the lease. Default a random UUID. */
  holder?: string;
  /** Called after each committed write (the observatory refreshes its scores). */
  onWrite?: () => void;
  /** Failures of a tick (logged by the service). */
  onError?: (error: unknown) => void;
}

export const RECORDER_DEFAULTS = {
  intervalMs: 60_000,
  backfillBlocks: 144,
  maxBlocksPerTick: 500,
  maxReorgDepth: 100,
  retentionMs: 30 * 24 * HOUR_MS,
} as const;

/** What one tick did. */
export interface TickReport {
  role: 'recorder' | 'follower';
  blocks: number;
  reorged: number;
  estimates: number;
  judged: number;
  failedSources: string[];
}

export interface Recorder {
  readonly holder: string;
  /** One poll: lease, chain, sources, judgments. Never throws for an upstream failure. */
  tick(): Promise<TickReport>;
  /** Ticks every `intervalMs` until stopped. */
  start(): void;
  /** Stops ticking, waits for the tick in flight and gives the lease up. */
  stop(): Promise<void>;
  isLeader(): boolean;
}

/**
 * Creates the recorder. Ticks do not overlap; call {@link Recorder.tick} directly to drive it in
 * fast time (the simulator's start-up history) or from a test.
 * @example
 * const recorder = createRecorder({ history, chain: mempoolSpaceChain(client), sources });
 * recorder.start();
 */
export function createRecorder(options: RecorderOptions): Recorder {
  const { history, chain, sources } = options;
  const intervalMs = options.intervalMs ?? RECORDER_DEFAULTS.intervalMs;
  const leaseTtlMs = options.leaseTtlMs ?? Math.max(15_000, 3 * intervalMs);
  const backfill = options.backfillBlocks ?? RECORDER_DEFAULTS.backfillBlocks;
  const maxBlocks = options.maxBlocksPerTick ?? RECORDER_DEFAULTS.maxBlocksPerTick;
  const maxReorgDepth = options.maxReorgDepth ?? RECORDER_DEFAULTS.maxReorgDepth;
  const retentionMs = options.retentionMs ?? RECORDER_DEFAULTS.retentionMs;
  // Whole milliseconds: a simulator's clock moves by fractions, the history stores integers.
  const clock = options.now ?? Date.now;
  const now = () => Math.floor(clock());
  const holder = options.holder ?? randomUUID();
  let leader = false;
  let book = new ScoreBook();
  let lastPrune = Number.NEGATIVE_INFINITY;
  let running: Promise<TickReport> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  /**
   * One fenced transaction: the work, then the score buckets it changed. If it fails, the book
   * may hold changes the history does not: it is rebuilt from the history on the next tick.
   */
  async function commit<T>(work: (writer: HistoryWriter) => Promise<T>): Promise<T> {
    try {
      return await history.write(holder, leaseTtlMs, async (writer) => {
        const result = await work(writer);
        await writer.putBuckets(book.changed());
        return result;
      });
    } catch (error) {
      leader = false;
      throw error;
    }
  }

  /** Becomes the recorder: loads the scores, and records the time nobody recorded as a gap. */
  async function lead(): Promise<void> {
    book = new ScoreBook();
    book.load((await history.bucketsAfter(-1)).buckets);
    const last = await history.lastActivity();
    const at = now();
    if (last !== undefined && at - last > 3 * intervalMs) {
      await commit(async (w) =>
        w.insertGap({ source: '*', startedAt: last, endedAt: at, reason: 'recorder_not_running' }),
      );
    }
    leader = true;
  }

  /** Finds the first height where the recorded chain and the upstream's differ, or undefined. */
  async function forkHeight(recordedTip: number): Promise<number | undefined> {
    if (
      (await chain.hashAt(recordedTip)) === (await history.hashes(recordedTip, recordedTip)).get(recordedTip)
    ) {
      return undefined;
    }
    const floor = recordedTip - maxReorgDepth;
    const recorded = await history.hashes(floor, recordedTip);
    let height = recordedTip - 1;
    while (height >= floor && recorded.has(height) && (await chain.hashAt(height)) !== recorded.get(height)) {
      height -= 1;
    }
    return height + 1;
  }

  /**
   * The relay minimum the new blocks are recorded with: read now, else (the fee endpoint down) the
   * one the last recorded block has; with neither, no block is recorded until it can be read.
   */
  async function relayMinimumNow(): Promise<number> {
    try {
      return await chain.relayMinimum();
    } catch (error) {
      const last = (await history.tip())?.relay_minimum;
      if (last === undefined) throw error;
      return last;
    }
  }

  async function syncChain(report: TickReport): Promise<number | undefined> {
    const upstreamTip = await chain.tipHeight();
    let recordedTip = (await history.tip())?.height;
    if (recordedTip !== undefined) {
      const fork = await forkHeight(Math.min(recordedTip, upstreamTip));
      if (fork !== undefined) {
        const undone = await commit((w) => disconnectFrom(w, book, fork));
        report.reorged = undone.blocks;
        recordedTip = fork - 1;
      } else if (upstreamTip < recordedTip) {
        // The upstream went back without a different hash at its own tip: it lost blocks we have.
        const undone = await commit((w) => disconnectFrom(w, book, upstreamTip + 1));
        report.reorged = undone.blocks;
        recordedTip = upstreamTip;
      }
    }
    const from = recordedTip === undefined ? Math.max(0, upstreamTip - backfill + 1) : recordedTip + 1;
    const to = Math.min(upstreamTip, from + maxBlocks - 1);
    if (to < from) return recordedTip;
    const chainBlocks = await chain.blocks(from, to);
    if (chainBlocks.length === 0) return recordedTip;
    if (recordedTip !== undefined && chainBlocks[0]!.height !== recordedTip + 1) {
      throw new RangeError(`the chain upstream has no block ${recordedTip + 1}`);
    }
    const relayMinimum = await relayMinimumNow();
    const blocks = chainBlocks.map((block) => ({ ...block, relay_minimum: relayMinimum }));
    report.judged += await commit((w) => connectBlocks(w, book, blocks));
    report.blocks = blocks.length;
    return blocks.at(-1)!.height;
  }

  async function pollSources(): Promise<PollOutcome[]> {
    return Promise.all(
      sources.map(async (source): Promise<PollOutcome> => {
        try {
          const poll = await source.poll();
          return { source, ok: true, poll, observedAt: now() };
        } catch (error) {
          return { source, ok: false, error, observedAt: now() };
        }
      }),
    );
  }

  async function tickOnce(): Promise<TickReport> {
    const report: TickReport = {
      role: 'follower',
      blocks: 0,
      reorged: 0,
      estimates: 0,
      judged: 0,
      failedSources: [],
    };
    if (!(await history.acquireLease(holder, leaseTtlMs))) {
      leader = false;
      return report;
    }
    if (!leader) await lead();
    report.role = 'recorder';
    let recordedTip: number | undefined;
    try {
      recordedTip = await syncChain(report);
    } catch (error) {
      // The chain upstream failing must not stop the polls (they are judged once blocks come).
      if (!leader) throw error;
      options.onError?.(error);
      recordedTip = (await history.tip())?.height;
    }
    const outcomes = await pollSources();
    report.failedSources = outcomes.filter((o) => !o.ok).map((o) => o.source.name);
    const recorded = await commit((w) => recordPolls(w, book, outcomes, recordedTip));
    report.estimates = recorded.estimates;
    report.judged += recorded.judged;
    const at = now();
    if (at - lastPrune > HOUR_MS) {
      lastPrune = at;
      await history.prune(at - retentionMs);
      book.dropBefore(Math.floor((at - retentionMs) / HOUR_MS));
    }
    options.onWrite?.();
    return report;
  }

  const recorder: Recorder = {
    holder,
    tick() {
      running ??= tickOnce().finally(() => {
        running = undefined;
      });
      return running;
    },
    start() {
      if (timer || stopped) return;
      const loop = async () => {
        try {
          await recorder.tick();
        } catch (error) {
          options.onError?.(error);
        }
        if (!stopped) timer = setTimeout(loop, intervalMs);
      };
      timer = setTimeout(loop, 0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => {});
      if (leader) await history.releaseLease(holder).catch(() => {});
      leader = false;
    },
    isLeader: () => leader,
  };
  return recorder;
}
