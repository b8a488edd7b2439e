import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeReady } from '../observatory/recorder-steps';
import { ScoreBook } from '../observatory/score-book';
import { historyMigrations } from './migrations';
import { openPostgresHistory, openSqliteHistory } from './open';
import type { BlocksTable, EstimatesTable, ScoreHoursTable } from './schema';
import type { HistoryStore } from './types';

/**
 * A history recorded under the first rule (a hit: q ≥ p10 of any block) is migrated to the rule
 * "would have been included" (docs/fee-rules.md#would-have-been-included): its blocks get the relay
 * minimum of 1 sat/vB, its judgments go back to pending and the recorder judges them again.
 */

const FIRST = '2026_11_26_001_observatory';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
const reachable = await probe.connect().then(
  () => true,
  () => false,
);
await probe.end().catch(() => {});

/** The tables as the first migration made them. */
interface FirstDatabase {
  observatory_blocks: Omit<BlocksTable, 'relay_minimum'>;
  observatory_estimates: Omit<EstimatesTable, 'entry_msat' | 'id'> & { id?: number };
  observatory_score_hours: Omit<ScoreHoursTable, 'miss_entry_sats'>;
}

/** Fills a history migrated to the first migration only: two blocks, two judged estimates, a bucket. */
async function recordUnderFirstRule(db: Kysely<FirstDatabase>): Promise<void> {
  const block = (height: number, weight: number, p10: number) => ({
    height,
    hash: height.toString(16).padStart(64, '0'),
    time: 1_790_000_000 + height * 600,
    tx_count: 1500,
    weight,
    total_fee: 500_000,
    subsidy: 312_500_000,
    min_rate: 1000,
    p10,
    p25: p10,
    p50: 2 * p10,
    p75: 3 * p10,
    p90: 4 * p10,
    max_rate: 50_000,
    avg_fee_rate: 2 * p10,
    stats_from: 'fee_range',
    recorded_at: 1_790_000_000_000,
  });
  // 101 had room (40 % full) with p10 3 sat/vB; 102 was full with p10 3 sat/vB
  await db
    .insertInto('observatory_blocks')
    .values([block(101, 1_600_000, 3000), block(102, 3_996_000, 3000)])
    .execute();
  // A quote of 1 sat/vB for each block: both misses by the first rule (1 < p10 3)
  const miss = { judged: 1, hit: 0, first_fit: null, overpay: 0, overpayment_msat: 0, overpayment_sats: 0 };
  await db
    .insertInto('observatory_estimates')
    .values([
      {
        source: 's',
        target: 1,
        rate: 1000,
        observed_at: 7_200_000,
        tip_height: 100,
        window_end: 101,
        ...miss,
      },
      {
        source: 's',
        target: 1,
        rate: 1000,
        observed_at: 7_260_000,
        tip_height: 101,
        window_end: 102,
        ...miss,
      },
    ])
    .execute();
  await db
    .insertInto('observatory_score_hours')
    .values({
      source: 's',
      target: 1,
      hour: 2,
      polls: 2,
      valid: 2,
      n: 2,
      hits: 0,
      overpays: 0,
      overpayment_sats: '[]',
      overpayment_msat: '[]',
      tip_heights: '[[100,1],[101,1]]',
      seq: 1,
    })
    .execute();
}

const engines: [string, () => Promise<{ history: HistoryStore; cleanup: () => Promise<void> }>][] = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'history-migration-'));
      const file = join(dir, 'observatory.sqlite');
      const db = new Kysely<FirstDatabase>({ dialect: new SqliteDialect({ database: new Database(file) }) });
      const migrator = new Migrator({
        db: db as Kysely<unknown>,
        provider: historyMigrations('sqlite'),
        migrationTableName: 'observatory_migrations',
        migrationLockTableName: 'observatory_migrations_lock',
      });
      expect((await migrator.migrateTo(FIRST)).error).toBeUndefined();
      await recordUnderFirstRule(db);
      await db.destroy();
      return {
        history: openSqliteHistory(file),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
];
if (reachable || process.env.CI) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas)
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  });
  engines.push([
    'postgres',
    async () => {
      const schema = `observatory_migration_${randomBytes(5).toString('hex')}`;
      schemas.push(schema);
      await pool.query(`CREATE SCHEMA "${schema}"`);
      const root = new Kysely<FirstDatabase>({ dialect: new PostgresDialect({ pool }) });
      const db = root.withSchema(schema);
      const migrator = new Migrator({
        db: db as Kysely<unknown>,
        provider: historyMigrations('postgres'),
        migrationTableName: 'observatory_migrations',
        migrationLockTableName: 'observatory_migrations_lock',
        migrationTableSchema: schema,
      });
      expect((await migrator.migrateTo(FIRST)).error).toBeUndefined();
      await recordUnderFirstRule(db);
      return { history: openPostgresHistory({ pool, schema }), cleanup: async () => {} };
    },
  ]);
}

describe.each(engines)(
  'the history migration to the rule "would have been included" on %s',
  (_name, open) => {
    it('gives old blocks the relay minimum of 1 sat/vB and judges their estimates again by the new rule', async () => {
      const { history, cleanup } = await open();
      try {
        await history.migrate();
        expect((await history.blocks({ limit: 5 })).map((b) => [b.height, b.relay_minimum])).toEqual([
          [102, 1000],
          [101, 1000],
        ]);
        const pending = await history.estimates({ since: 0, until: 10_000_000, limit: 10 });
        expect(pending.map((e) => [e.tipHeight, e.status, e.judgment])).toEqual([
          [100, 'pending', undefined],
          [101, 'pending', undefined],
        ]);
        // the bucket keeps its polls and loses the first rule's judgments
        const { buckets } = await history.bucketsAfter(-1);
        expect(buckets).toEqual([
          expect.objectContaining({
            polls: 2,
            valid: 2,
            n: 0,
            hits: 0,
            tip_heights: [],
            miss_entry_sats: [],
          }),
        ]);

        // the recorder's next tick: 1 sat/vB would have been included in 101 (room), not in 102 (full)
        const book = new ScoreBook();
        book.load(buckets);
        await history.acquireLease('r', 60_000);
        await history.write('r', 60_000, async (w) => {
          expect(await judgeReady(w, book, 102)).toBe(2);
          await w.putBuckets(book.changed());
        });
        const judged = await history.estimates({ since: 0, until: 10_000_000, limit: 10 });
        expect(judged.map((e) => [e.tipHeight, e.judgment?.hit, e.judgment?.entryMsat])).toEqual([
          [100, true, 1000],
          [101, false, 3000],
        ]);
        const copy = new ScoreBook();
        copy.load((await history.bucketsAfter(-1)).buckets);
        expect(copy.scoreboard(0, 10)).toEqual([
          expect.objectContaining({
            source: 's',
            polls: 2,
            n: 2,
            hit_rate: 0.5,
            median_miss_entry_fee_sats_140: 420,
          }),
        ]);
      } finally {
        await history.close();
        await cleanup();
      }
    });
  },
);
