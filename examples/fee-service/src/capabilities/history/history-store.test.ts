import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeEstimate } from '../observatory/scoring';
import { openPostgresHistory, openSqliteHistory } from './open';
import { type HistoryStore, LeaseLostError, type StoredBlock } from './types';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
const reachable = await probe.connect().then(
  () => true,
  () => false,
);
await probe.end().catch(() => {});
if (!reachable && !process.env.CI) {
  console.warn(`[history] skipping PostgreSQL tests: not reachable at DATABASE_URL=${databaseUrl}`);
}

/** A block whose percentiles are all `rate` sat/vB except p10 (`p10` sat/vB). */
export function buildBlock(height: number, overrides: Partial<StoredBlock> = {}): StoredBlock {
  return {
    height,
    hash: height.toString(16).padStart(64, '0'),
    time: 1_790_000_000 + height * 600,
    tx_count: 3000,
    weight: 3_993_000,
    total_fee: 2_000_000,
    subsidy: 312_500_000,
    min: 1000,
    p10: 2000,
    p25: 3000,
    p50: 4000,
    p75: 5000,
    p90: 8000,
    max: 100_000,
    avg_fee_rate: 4500,
    stats_from: 'fee_range',
    relay_minimum: 1000,
    ...overrides,
  };
}

const schemas: string[] = [];
const pgPool = reachable ? new pg.Pool({ connectionString: databaseUrl, max: 6 }) : undefined;
afterAll(async () => {
  for (const schema of schemas)
    await pgPool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await pgPool?.end();
});

const engines: [string, () => HistoryStore][] = [['sqlite', () => openSqliteHistory(':memory:')]];
if (reachable || process.env.CI) {
  engines.push([
    'postgres',
    () => {
      const schema = `observatory_test_${randomBytes(5).toString('hex')}`;
      schemas.push(schema);
      return openPostgresHistory({ pool: pgPool!, schema });
    },
  ]);
}

describe.each(engines)('history store on %s', (_name, open) => {
  it('migrates twice without harm and starts empty', async () => {
    const history = open();
    await Promise.all([history.migrate(), history.migrate()]);
    expect(await history.counts()).toEqual({ blocks: 0, estimates: 0, buckets: 0, gaps: 0 });
    expect(await history.tip()).toBeUndefined();
    await history.close();
  });

  it('gives the lease to one holder until it expires or is released', async () => {
    const history = open();
    await history.migrate();
    expect(await history.acquireLease('a', 10_000, 1_000)).toBe(true);
    expect(await history.acquireLease('b', 10_000, 2_000)).toBe(false);
    expect(await history.acquireLease('a', 10_000, 3_000)).toBe(true); // renewal
    expect(await history.acquireLease('b', 10_000, 14_000)).toBe(true); // a's expired at 13,000
    await history.releaseLease('b');
    expect(await history.acquireLease('a', 10_000, 15_000)).toBe(true);
    await history.close();
  });

  it('refuses a write from a holder that lost the lease, and writes nothing of it', async () => {
    const history = open();
    await history.migrate();
    const t = Date.now();
    expect(await history.acquireLease('a', 1_000, t)).toBe(true);
    expect(await history.acquireLease('b', 60_000, t + 2_000)).toBe(true);
    await expect(
      history.write('a', 1_000, async (w) => w.insertBlock(buildBlock(1)), t + 2_500),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await history.write('b', 60_000, async (w) => w.insertBlock(buildBlock(2)), t + 3_000);
    expect((await history.blocks({ limit: 10 })).map((b) => b.height)).toEqual([2]);
    await history.close();
  });

  it('records blocks, estimates and judgments, and pages estimates by a keyset cursor', async () => {
    const history = open();
    await history.migrate();
    await history.acquireLease('r', 60_000);
    const inserted = await history.write('r', 60_000, async (w) => {
      for (let h = 100; h <= 103; h += 1)
        await w.insertBlock(buildBlock(h, { p10: 1000 * h, relay_minimum: 1000 + h }));
      return w.insertEstimates([
        { source: 's', target: 1, rate: 101_000, observedAt: 5_000, tipHeight: 100 },
        { source: 's', target: 3, rate: 50_000, observedAt: 5_000, tipHeight: 100 },
        { source: 't', target: 1, rate: 7_000, observedAt: 6_000, tipHeight: 102 },
      ]);
    });
    expect(inserted.map((e) => e.status)).toEqual(['pending', 'pending', 'pending']);
    await history.write('r', 60_000, async (w) => {
      const ready = await w.estimatesReadyAt(101);
      expect(ready.map((e) => e.id)).toEqual([inserted[0]!.id]);
      const blocks = await w.percentiles(101, 101);
      expect(blocks).toEqual([
        { height: 101, weight: 3_993_000, p10: 101_000, p75: 5000, relayMinimum: 1101 },
      ]);
      await w.setJudgments([{ id: ready[0]!.id, judgment: judgeEstimate(ready[0]!, blocks) }]);
      await w.setJudgments([{ id: inserted[1]!.id, judgment: undefined, unjudgeable: true }]);
    });
    const page1 = await history.estimates({ since: 0, until: 10_000, limit: 2 });
    expect(page1.map((e) => [e.source, e.target, e.status])).toEqual([
      ['s', 1, 'judged'],
      ['s', 3, 'unjudgeable'],
    ]);
    expect(page1[0]!.judgment).toMatchObject({ hit: true, firstFit: 101, overpay: true });
    const last = page1.at(-1)!;
    const page2 = await history.estimates({
      since: 0,
      until: 10_000,
      limit: 2,
      after: { observedAt: last.observedAt, id: last.id },
    });
    expect(page2.map((e) => e.source)).toEqual(['t']);
    expect(
      await history.estimates({ since: 0, until: 10_000, limit: 5, source: 's', target: 3 }),
    ).toHaveLength(1);
    await history.write('r', 60_000, async (w) => {
      expect((await w.judgedReaching(101)).map((e) => e.id)).toEqual([inserted[0]!.id]);
      expect(await w.deleteBlocksFrom(102)).toBe(2);
    });
    expect(await history.tip()).toMatchObject({ height: 101, relay_minimum: 1101 });
    expect([...(await history.hashes(100, 105)).keys()]).toEqual([100, 101]);
    await history.close();
  });

  it('hands score buckets to followers by write sequence', async () => {
    const history = open();
    await history.migrate();
    await history.acquireLease('r', 60_000);
    const bucket = {
      source: 's',
      target: 6,
      hour: 490_000,
      polls: 3,
      valid: 2,
      n: 1,
      hits: 1,
      overpays: 0,
      overpayment_sats: [[140, 1]] as [number, number][],
      overpayment_msat: [[1000, 1]] as [number, number][],
      miss_entry_sats: [[420, 2]] as [number, number][],
      tip_heights: [[100, 1]] as [number, number][],
    };
    await history.write('r', 60_000, (w) => w.putBuckets([bucket]));
    const first = await history.bucketsAfter(-1);
    expect(first.buckets).toEqual([bucket]);
    await history.write('r', 60_000, (w) => w.putBuckets([{ ...bucket, polls: 4 }]));
    const second = await history.bucketsAfter(first.seq);
    expect(second.buckets.map((b) => b.polls)).toEqual([4]);
    expect(second.seq).toBeGreaterThan(first.seq);
    expect((await history.bucketsAfter(second.seq)).buckets).toEqual([]);
    await history.close();
  });

  it('keeps one open gap per source and prunes what is past retention', async () => {
    const history = open();
    await history.migrate();
    await history.acquireLease('r', 60_000);
    await history.write('r', 60_000, async (w) => {
      expect(await w.openGap('esplora', 1_000, 'upstream_unavailable')).toBe(true);
      expect(await w.openGap('esplora', 2_000, 'upstream_unavailable')).toBe(false);
      await w.closeGap('esplora', 3_000);
      await w.insertGap({ source: '*', startedAt: 10_000, endedAt: 20_000, reason: 'recorder_not_running' });
      await w.insertEstimates([{ source: 's', target: 1, rate: 1, observedAt: 500, tipHeight: 1 }]);
    });
    expect(await history.gaps(0, 5_000)).toEqual([
      {
        id: expect.any(Number),
        source: 'esplora',
        startedAt: 1_000,
        endedAt: 3_000,
        reason: 'upstream_unavailable',
      },
    ]);
    expect(await history.lastActivity()).toBe(10_000);
    await history.prune(5_000);
    expect(await history.counts()).toMatchObject({ estimates: 0, gaps: 1 });
    await history.close();
  });
});
