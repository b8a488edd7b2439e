// The durable ledger stores of section 3 (SQLite, Redis, PostgreSQL): a claim, and the claim with
// the three state changes of one paid request, one operation at a time against a real server; a
// store that cannot be reached is skipped with a note.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LedgerStore } from '@tollbooth/core';
import type { BenchConfig } from './lib/config';
import { type MicroResult, measure } from './lib/measure';
import { claimAndFinish, entryFor } from './lib/paid-path';
import type { PaymentPool } from './lib/payments';

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
        opened.store.claim(entryFor(payload, requirement, `c:${tag}:${i}`)),
      );
      const full = await measure(
        'durable ledger stores',
        `${name}: claim + 3 state changes (one paid request)`,
        ops,
        config.batches,
        (i) => claimAndFinish(opened.store, entryFor(payload, requirement, `f:${tag}:${i}`)),
      );
      for (const r of [claimOnly, full]) {
        out.push(r);
        log(`  ${r.name}: ${r.wallUs.median.toFixed(0)} µs wall, ${r.cpuUs.median.toFixed(0)} µs CPU`);
      }
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
