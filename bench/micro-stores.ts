// The durable ledger stores of section 3 (SQLite, Redis, PostgreSQL): a claim, and the claim with
// the three state changes of one paid request, one operation at a time against a real server; a
// store that cannot be reached is skipped with a note. The paid request is measured twice in the
// same run, interleaved batch by batch: as the gate writes it (two synchronous commits: settling
// and settled, docs/ledger.md#durability) and with every write durable (four, the ledger before
// #38 part 5), so the ratio of the two walls is measured, not argued.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LedgerStore } from '@tollbooth/core';
import type { BenchConfig } from './lib/config';
import { type MicroResult, measure } from './lib/measure';
import { claimAndFinish, entryFor, type LedgerDurability, SYNC_COMMITS_PER_REQUEST } from './lib/paid-path';
import type { PaymentPool } from './lib/payments';
import { spread } from './lib/stats';

export async function durableStores(
  config: BenchConfig,
  pool: PaymentPool,
  notes: string[],
  log: (line: string) => void,
): Promise<MicroResult[]> {
  const out: MicroResult[] = [];
  const payload = pool.payloads[0]!;
  const requirement = payload.accepted;
  const tag = randomBytes(4).toString('hex');
  const ops = config.quick ? 50 : 200;
  const run = async (
    name: string,
    open: () => Promise<{ store: LedgerStore; cleanup: () => Promise<void> }>,
  ) => {
    let opened: { store: LedgerStore; cleanup: () => Promise<void> };
    try {
      opened = await open();
    } catch (error) {
      notes.push(`${name}: skipped (${(error as Error).message}).`);
      log(`  ${name}: skipped (${(error as Error).message})`);
      return;
    }
    try {
      const claimOnly = await measure('durable ledger stores', `${name}: claim`, ops, config.batches, (i) =>
        opened.store.claim(entryFor(payload, requirement, `c:${tag}:${i}`), { durable: false }),
      );
      // One batch of each at a time, alternating, so drift on a shared machine moves both alike.
      const rows: Record<LedgerDurability, MicroResult[]> = { gate: [], 'all-durable': [] };
      for (let b = 0; b < config.batches; b++) {
        for (const durability of b % 2 === 0
          ? (['gate', 'all-durable'] as const)
          : (['all-durable', 'gate'] as const)) {
          rows[durability].push(
            await measure('durable ledger stores', durability, ops, 1, (i) =>
              claimAndFinish(
                opened.store,
                entryFor(payload, requirement, `${durability}:${b}:${tag}:${i}`),
                durability,
              ),
            ),
          );
        }
      }
      const merged = (durability: LedgerDurability, rowName: string): MicroResult => ({
        group: 'durable ledger stores',
        name: rowName,
        wallUs: spread(rows[durability].map((r) => r.wallUs.median)),
        cpuUs: spread(rows[durability].map((r) => r.cpuUs.median)),
        opsPerBatch: ops,
      });
      const full = merged('gate', `${name}: claim + 3 state changes (one paid request)`);
      const allDurable = merged('all-durable', `${name}: claim + 3 state changes, all durable (before #38)`);
      // The synchronous commits the ledger asks for (writes not marked durable: false);
      // test/ledger-synchronous-commits.test.ts reads the same count from the databases. Redis has
      // no per-write durability (docs/ledger.md#durability): no count to give. The targets read the
      // count and the all-durable wall from the paid request's row.
      if (name !== 'Redis') {
        full.syncCommits = SYNC_COMMITS_PER_REQUEST.gate;
        allDurable.note = `${SYNC_COMMITS_PER_REQUEST['all-durable']} synchronous commits per paid request`;
      }
      full.beforeWallUs = allDurable.wallUs;
      for (const r of [claimOnly, full, allDurable]) {
        out.push(r);
        log(
          `  ${r.name}: ${r.wallUs.median.toFixed(0)} µs wall, ${r.cpuUs.median.toFixed(0)} µs CPU` +
            (r.syncCommits === undefined ? '' : `, ${r.syncCommits} synchronous commits`),
        );
      }
      if (name === 'Redis')
        notes.push(
          "Redis: the same two rows, but Redis has no per-write durability: every write is as durable as the server's appendfsync (docs/ledger.md#durability), so the two rows differ only by noise.",
        );
    } catch (error) {
      notes.push(`${name}: failed (${(error as Error).message}).`);
    } finally {
      await opened.cleanup().catch(() => {});
    }
  };

  await run('SQLite (file, WAL)', async () => {
    const { createSqliteLedgerStore } = await import('@tollbooth/store-sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-bench-'));
    const store = createSqliteLedgerStore({ filename: join(dir, 'ledger.db'), purgeIntervalMs: 0 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  // What the SQLite store adds to a write that need not wait for the disk: the synchronous pragma
  // set to NORMAL before it and back to FULL after (two prepared statements, no I/O).
  try {
    const Database = (await import('better-sqlite3')).default;
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-bench-'));
    const db = new Database(join(dir, 'pragma.db'));
    db.pragma('journal_mode = WAL');
    const normal = db.prepare('PRAGMA synchronous = NORMAL');
    const full = db.prepare('PRAGMA synchronous = FULL');
    const toggle = await measure(
      'durable ledger stores',
      'SQLite (file, WAL): synchronous NORMAL then FULL again (per relaxed write)',
      ops * 10,
      config.batches,
      () => {
        normal.run();
        full.run();
      },
    );
    out.push(toggle);
    log(`  ${toggle.name}: ${toggle.wallUs.median.toFixed(2)} µs wall`);
    db.close();
    rmSync(dir, { recursive: true, force: true });
  } catch (error) {
    notes.push(`SQLite pragma toggle: failed (${(error as Error).message}).`);
  }

  await run('Redis', async () => {
    const { createRedisLedgerStore } = await import('@tollbooth/store-redis');
    const { Redis } = await import('ioredis');
    const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
    await redis.connect();
    await redis.ping();
    const keyPrefix = `tollbooth:bench:${tag}:`;
    const store = createRedisLedgerStore({ redis, keyPrefix, purgeIntervalMs: 0 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
        redis.disconnect();
      },
    };
  });

  await run('PostgreSQL', async () => {
    const { createPostgresLedgerStore } = await import('@tollbooth/store-postgres');
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({
      connectionString: process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
      connectionTimeoutMillis: 2000,
    });
    await pool.query('select 1');
    const tableName = `tollbooth_bench_${tag}`;
    const store = createPostgresLedgerStore({ pool, tableName, purgeIntervalMs: 0 });
    await store.migrate();
    return {
      store,
      cleanup: async () => {
        await store.close();
        await pool.query(`drop table if exists ${tableName}`);
        await pool.end();
      },
    };
  });
  return out;
}
