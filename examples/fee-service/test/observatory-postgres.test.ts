// Two fee-service instances on one PostgreSQL history: one recorder is elected by the lease, so
// each block and each poll is recorded exactly once while both tick at the same moments; when the
// recorder stops, the other takes over where it left off.
import { randomBytes } from 'node:crypto';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TickReport } from '../src/observatory/recorder';
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
    // Let both start-up ticks finish (one of them backfilled the simulator's first blocks).
    const reports: TickReport[] = [
      await a.observatory!.recorder.tick(),
      await b.observatory!.recorder.tick(),
    ];
    for (let round = 0; round < 12; round += 1) {
      simulator.advance(5 * 60_000);
      if (round % 3 === 0) simulator.mineBlock();
      if (round === 6) await a.close(); // graceful: gives the lease up
      const ticking = round >= 6 ? [b] : [a, b];
      const round_ = await Promise.all(ticking.map((s) => s.observatory!.recorder.tick()));
      expect(round_.filter((r) => r.role === 'recorder')).toHaveLength(1);
      reports.push(...round_);
    }
    const { rows: heights } = await pool.query<{ height: number }>(
      `SELECT height FROM "${schema}".observatory_blocks ORDER BY height`,
    );
    const recorded = heights.map((r) => r.height);
    // every block of the simulator's chain, once, contiguous up to its tip
    expect(recorded.at(-1)).toBe(simulator.model.tipHeight());
    expect(recorded).toEqual(recorded.map((_, i) => recorded[0]! + i));
    // each block was written by exactly one tick of one instance
    expect(reports.reduce((sum, r) => sum + r.blocks, 0)).toBe(recorded.length);
    // each poll was recorded by exactly one instance: estimates = the leaders' reports
    const { rows: count } = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${schema}".observatory_estimates`,
    );
    expect(Number(count[0]!.n)).toBe(reports.reduce((sum, r) => sum + r.estimates, 0));
    // one recorder per round: the start-up round and twelve more
    expect(reports.filter((r) => r.role === 'recorder').length).toBe(13);
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
