// Two fee-service instances on one PostgreSQL history: one recorder is elected by the lease, so
// each block and each poll is recorded exactly once while both tick at the same moments; when the
// recorder stops, the other takes over where it left off.
import { randomBytes } from 'node:crypto';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TickReport } from '../src/capabilities/observatory/recorder';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { removeScratch, startTestService } from './support/harness';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
const reachable = await probe.connect().then(
  () => true,
  () => false,
);
await probe.end().catch(() => {});
if (!reachable && !process.env.CI)
  console.warn(`[observatory] skipping: PostgreSQL not reachable at ${databaseUrl}`);

describe.runIf(reachable || process.env.CI)('two instances on one PostgreSQL history', () => {
  const schema = `observatory_two_${randomBytes(5).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  let devnet: Devnet;
  let simulator: MempoolSimulator;
  let a: RunningFeeService;
  let b: RunningFeeService;

  beforeAll(async () => {
    [devnet, simulator] = await Promise.all([startDevnet({ payers: 1 }), startMempoolSimulator({ seed: 5 })]);
    // The test ticks the recorders itself: their own loop waits an hour after its first tick.
    const env = { HISTORY_URL: `${databaseUrl}?schema=${schema}`, OBSERVATORY_INTERVAL_MS: '3600000' };
    a = await startTestService(env, { devnet, simulator });
    b = await startTestService(env, { devnet, simulator });
  }, 120_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await Promise.all([devnet?.stop(), simulator?.close()]);
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
    removeScratch();
  });

  it('records each block and each poll exactly once, and the survivor takes over', async () => {
    const recorded = async () => {
      const { rows } = await pool.query<{ height: number }>(
        `SELECT height FROM "${schema}".observatory_blocks ORDER BY height`,
      );
      const { rows: count } = await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${schema}".observatory_estimates`,
      );
      return { heights: rows.map((r) => r.height), estimates: Number(count[0]!.n) };
    };
    // Each service ticks once as it starts (its loop's first tick; the recorder's backfills the
    // simulator's chain). A tick of each waits for that one: a tick in flight is joined, never run
    // twice. Whether these ticks joined the start-up ones or ran after them depends on how fast the
    // services started, so the rounds below are counted from what the history holds after them.
    const startup = [await a.observatory!.recorder.tick(), await b.observatory!.recorder.tick()];
    expect(startup.map((r) => r.role)).toEqual(['recorder', 'follower']);
    const before = await recorded();
    // the simulator's whole chain, once, contiguous up to its tip
    expect(simulator.model.blockByHeight(before.heights[0]! - 1)).toBeUndefined();
    expect(before.heights).toEqual(before.heights.map((_, i) => before.heights[0]! + i));
    expect(before.heights.at(-1)).toBe(simulator.model.tipHeight());
    expect(before.estimates).toBeGreaterThan(0);

    const reports: TickReport[] = [];
    const recorders: string[] = [];
    for (let round = 0; round < 12; round += 1) {
      simulator.advance(5 * 60_000);
      if (round % 3 === 0) simulator.mineBlock();
      if (round === 6) await a.close(); // graceful: gives the lease up
      const ticking = round >= 6 ? [b] : [a, b];
      const round_ = await Promise.all(ticking.map((s) => s.observatory!.recorder.tick()));
      expect(round_.filter((r) => r.role === 'recorder')).toHaveLength(1);
      recorders.push(ticking[round_.findIndex((r) => r.role === 'recorder')] === a ? 'a' : 'b');
      reports.push(...round_);
    }
    const after = await recorded();
    // every block of the simulator's chain, once, contiguous up to its tip
    expect(after.heights.at(-1)).toBe(simulator.model.tipHeight());
    expect(after.heights).toEqual(after.heights.map((_, i) => before.heights[0]! + i));
    // each new block was written by exactly one tick of one instance (four were mined on demand)
    const blocks = reports.reduce((sum, r) => sum + r.blocks, 0);
    expect(blocks).toBeGreaterThanOrEqual(4);
    expect(blocks).toBe(after.heights.length - before.heights.length);
    // each poll was recorded by exactly one instance: new estimates = the leaders' reports
    expect(after.estimates - before.estimates).toBe(reports.reduce((sum, r) => sum + r.estimates, 0));
    // one recorder per round: a until it stopped, then b
    expect(recorders).toEqual([...Array(6).fill('a'), ...Array(6).fill('b')]);
    // and judged once: the score buckets count what the estimates table says is judged
    const { rows: judged } = await pool.query<{ judged: string; n: string }>(
      `SELECT (SELECT count(*) FROM "${schema}".observatory_estimates WHERE judged = 1) AS judged,
              (SELECT coalesce(sum(n), 0) FROM "${schema}".observatory_score_hours) AS n`,
    );
    expect(Number(judged[0]!.judged)).toBeGreaterThan(0);
    expect(Number(judged[0]!.n)).toBe(Number(judged[0]!.judged));
    // the follower's scoreboard is the recorder's
    await b.observatory!.observatory.refresh();
    const board = await b.observatory!.observatory.scoreboard({ hours: 720 });
    expect(board.rows.reduce((sum, r) => sum + r.n, 0)).toBe(Number(judged[0]!.judged));
  }, 120_000);
});
