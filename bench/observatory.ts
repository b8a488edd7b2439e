// Section 5: the fee observatory. (a) The scoreboard's cost over a history of 10^4, 10^5 and 10^6
// recorded estimates spread over the same week of blocks: a scoreboard adds hourly score buckets,
// so its cost must not follow the number of estimates. (b) The recorder's cost per poll against
// the mempool simulator through its real dialects (mempool.space, Esplora, Core in both modes).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteHistory } from '../examples/fee-service/src/capabilities/history/open';
import type { HistoryStore, StoredBlock } from '../examples/fee-service/src/capabilities/history/types';
import { createObservatory } from '../examples/fee-service/src/capabilities/observatory/observatory';
import { createRecorder } from '../examples/fee-service/src/capabilities/observatory/recorder';
import {
  connectBlocks,
  type PollOutcome,
  recordPolls,
} from '../examples/fee-service/src/capabilities/observatory/recorder-steps';
import { ScoreBook } from '../examples/fee-service/src/capabilities/observatory/score-book';
import {
  observatoryChain,
  observatorySources,
} from '../examples/fee-service/src/capabilities/observatory/setup';
import type { EstimateSource } from '../examples/fee-service/src/capabilities/observatory/sources';
import { createPrng } from '../examples/fee-service/src/simulator/prng';
import { startMempoolSimulator } from '../examples/fee-service/src/simulator/server';
import { createBitcoinCoreClient } from '../examples/fee-service/src/upstreams/bitcoin-core';
import { createEsploraClient } from '../examples/fee-service/src/upstreams/esplora';
import { createMempoolSpaceClient } from '../examples/fee-service/src/upstreams/mempool-space';
import type { BenchConfig } from './lib/config';
import { percentile, type Spread, spread } from './lib/stats';

export interface ScoreboardMeasure {
  estimates: number;
  blocks: number;
  buckets: number;
  /** Milliseconds to build the history (the recorder's own write path). */
  buildMs: number;
  databaseMiB: number;
  /** First scoreboard of a fresh instance: reads every bucket. */
  coldMs: number;
  /** Wall ms per scoreboard computed anew over 168 h and over 720 h, and CPU ms over 168 h. */
  ms168: Spread;
  p99ms168: number;
  cpuMs168: Spread;
  ms720: Spread;
  /** A repeated request while no judgment came in (the kept result). */
  cachedMs: Spread;
}

export interface RecorderMeasure {
  ticks: number;
  blocks: number;
  estimatesPerTick: number;
  requestsPerTick: number;
  wallMs: Spread;
  cpuMs: Spread;
}

export interface ObservatorySectionResult {
  scoreboard: ScoreboardMeasure[];
  recorder: RecorderMeasure;
  notes: string[];
}

/** One week of blocks: every size spreads its estimates over the same span and the same buckets. */
const SPAN_BLOCKS = 1008;
const TARGETS = [1, 2, 3, 6, 12, 24, 144];
const SOURCES = ['mempool.space', 'esplora', 'core-economical', 'core-conservative'];
/** Estimates per poll: 4 sources, mempool.space quoting 4 targets and the others 7. */
const PER_POLL = 4 + 3 * TARGETS.length;

/** A source quoting seeded rates around the block's fee level, like an estimator that is sometimes wrong. */
function syntheticSources(rng: ReturnType<typeof createPrng>, level: () => number): EstimateSource[] {
  return SOURCES.map((name, i) => {
    const targets = name === 'mempool.space' ? [1, 3, 6, 144] : TARGETS;
    return {
      name,
      targets,
      poll: async () => ({
        tipHeight: 0,
        rates: new Map(
          targets.map((t) => [
            t,
            Math.round((level() * (0.6 + 0.25 * i + rng.next()) * 1000) / Math.sqrt(t)),
          ]),
        ),
      }),
    };
  });
}

function syntheticBlock(height: number, time: number, rng: ReturnType<typeof createPrng>): StoredBlock {
  const p10 = Math.round(1000 * rng.logNormal(3, 0.5));
  return {
    height,
    hash: height.toString(16).padStart(64, '0'),
    time: Math.floor(time / 1000),
    tx_count: 3000,
    weight: 3_993_000,
    total_fee: 2_000_000,
    subsidy: 312_500_000,
    min: Math.round(p10 * 0.7),
    p10,
    p25: Math.round(p10 * 1.3),
    p50: Math.round(p10 * 1.8),
    p75: Math.round(p10 * 2.6),
    p90: Math.round(p10 * 4),
    max: p10 * 30,
    avg_fee_rate: p10 * 2,
    stats_from: 'fee_range',
    relay_minimum: 1000,
  };
}

/**
 * Fills a history with `SPAN_BLOCKS` blocks and `estimates` estimates through the recorder's own
 * steps (insert, judge when the window completes, write the buckets in the same transaction).
 */
async function buildHistory(history: HistoryStore, estimates: number, end: number): Promise<number> {
  const rng = createPrng(7);
  const book = new ScoreBook();
  const polls = Math.ceil(estimates / PER_POLL);
  const pollsPerBlock = polls / SPAN_BLOCKS;
  let level = 3;
  const sources = syntheticSources(rng, () => level);
  const start = end - SPAN_BLOCKS * 600_000;
  await history.acquireLease('bench', 3_600_000);
  let pollsDone = 0;
  for (let b = 0; b < SPAN_BLOCKS; b += 1) {
    const time = start + b * 600_000;
    const height = 900_000 + b;
    level = Math.max(1, level * Math.exp(0.15 * rng.normal()));
    const due = Math.round((b + 1) * pollsPerBlock) - pollsDone;
    const outcomes: PollOutcome[] = [];
    for (let p = 0; p < due; p += 1) {
      const observedAt = time + Math.floor((p * 600_000) / Math.max(1, due));
      for (const source of sources) {
        const poll = await source.poll();
        outcomes.push({ source, ok: true, poll: { ...poll, tipHeight: height - 1 }, observedAt });
      }
    }
    pollsDone += due;
    await history.write('bench', 3_600_000, async (w) => {
      await recordPolls(w, book, outcomes, height - 1);
      await connectBlocks(w, book, [syntheticBlock(height, time + 600_000, rng)]);
      await w.putBuckets(book.changed());
    });
  }
  return pollsDone * PER_POLL;
}

async function timeScoreboards(history: HistoryStore, now: number, hours: number, count: number) {
  const observatory = createObservatory({
    history,
    now: () => now,
    maxStalenessMs: Number.POSITIVE_INFINITY,
  });
  const coldStart = performance.now();
  await observatory.refresh();
  await observatory.scoreboard({ hours });
  const coldMs = performance.now() - coldStart;
  const samples: number[] = [];
  const cpu: number[] = [];
  const cached: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const c = process.cpuUsage();
    const t = performance.now();
    await observatory.scoreboard({ hours, cache: false });
    samples.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
    const k = performance.now();
    await observatory.scoreboard({ hours });
    cached.push(performance.now() - k);
  }
  return { coldMs, samples, cpu, cached };
}

async function measureScoreboard(estimates: number, log: (line: string) => void, calls: number) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-observatory-'));
  const file = join(dir, 'observatory.sqlite');
  const history = openSqliteHistory(file);
  try {
    await history.migrate();
    const end = Date.parse('2026-11-20T00:00:00Z');
    const built = performance.now();
    const recorded = await buildHistory(history, estimates, end);
    const buildMs = performance.now() - built;
    const counts = await history.counts();
    log(
      `  ${recorded.toLocaleString('en-US')} estimates over ${counts.blocks} blocks built in ${(buildMs / 1000).toFixed(1)} s`,
    );
    const week = await timeScoreboards(history, end, 168, calls);
    const month = await timeScoreboards(history, end, 720, calls);
    return {
      estimates: counts.estimates,
      blocks: counts.blocks,
      buckets: counts.buckets,
      buildMs,
      databaseMiB: statSync(file).size / 2 ** 20,
      coldMs: week.coldMs,
      ms168: spread(week.samples),
      p99ms168: percentile(week.samples, 99),
      cpuMs168: spread(week.cpu),
      ms720: spread(month.samples),
      cachedMs: spread(week.cached),
    } satisfies ScoreboardMeasure;
  } finally {
    await history.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureRecorder(ticks: number): Promise<RecorderMeasure> {
  const simulator = await startMempoolSimulator({ seed: 42, scenario: 'calm' });
  const history = openSqliteHistory(':memory:');
  try {
    await history.migrate();
    const upstreams = {
      mempool: createMempoolSpaceClient({ baseUrl: simulator.url }),
      esplora: createEsploraClient({ baseUrl: simulator.esploraUrl }),
      core: createBitcoinCoreClient({
        url: simulator.coreRpcUrl,
        username: simulator.rpcUser,
        password: simulator.rpcPassword,
      }),
    };
    const recorder = createRecorder({
      history,
      chain: observatoryChain(upstreams)!,
      sources: observatorySources(upstreams),
      now: () => simulator.model.nowMs,
    });
    // warm-up: the first tick backfills blocks, and V8 optimises the path
    for (let i = 0; i < 30; i += 1) {
      simulator.advance(60_000);
      await recorder.tick();
    }
    const startHeight = simulator.model.tipHeight();
    const startRequests = simulator.requestCount();
    const wall: number[] = [];
    const cpu: number[] = [];
    let estimates = 0;
    for (let i = 0; i < ticks; i += 1) {
      simulator.advance(60_000);
      const c = process.cpuUsage();
      const t = performance.now();
      const report = await recorder.tick();
      wall.push(performance.now() - t);
      const used = process.cpuUsage(c);
      cpu.push((used.user + used.system) / 1000);
      estimates += report.estimates;
    }
    return {
      ticks,
      blocks: simulator.model.tipHeight() - startHeight,
      estimatesPerTick: estimates / ticks,
      requestsPerTick: (simulator.requestCount() - startRequests) / ticks,
      wallMs: spread(wall),
      cpuMs: spread(cpu),
    };
  } finally {
    await history.close();
    await simulator.close();
  }
}

export async function runObservatorySection(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<ObservatorySectionResult> {
  const sizes = config.quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
  const calls = config.quick ? 50 : 200;
  const scoreboard: ScoreboardMeasure[] = [];
  for (const size of sizes) {
    log(`observatory: scoreboard over ${size.toLocaleString('en-US')} estimates`);
    scoreboard.push(await measureScoreboard(size, log, calls));
  }
  log('observatory: recorder cost per poll');
  const recorder = await measureRecorder(config.quick ? 60 : 300);
  return {
    scoreboard,
    recorder,
    notes: [
      `Each history spreads its estimates over the same ${SPAN_BLOCKS} blocks (one week at 600 s a block): ${PER_POLL} estimates per poll (mempool.space's 4 tiers, Esplora and Core in two modes on ${TARGETS.length} targets), more polls per block for a larger history, every estimate judged through the recorder's own steps into a SQLite file (WAL).`,
      `A scoreboard is timed in process (the observatory's query, ranking included; the paid resource adds its JSON and the gate), ${calls} calls computed anew after a first one that reads every score bucket of the history (*cold*); each is followed by the same request answered from the kept result, as every request is until the next judgment (a new block or poll).`,
      'The recorder is timed per tick against the mempool simulator in the same process (its HTTP server and model CPU are included in the figure), after 30 warm-up ticks, one tick per simulated minute, with an in-memory SQLite history.',
    ],
  };
}
