import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLedgerStore } from '@tollbooth/core';
import { createPostgresLedgerStore } from '@tollbooth/store-postgres';
import { createRedisLedgerStore } from '@tollbooth/store-redis';
import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describeLedgerStore } from './support/ledger-store-suite';

describeLedgerStore('memory', () => createMemoryLedgerStore(), { durable: false, shared: false });

// One database file per run (made on first use, so a filtered run leaves nothing behind); each
// namespace is a table of its own, opened by a new connection each time.
let sqliteDir: string | undefined;
describeLedgerStore(
  'SQLite',
  (namespace) => {
    sqliteDir ??= mkdtempSync(join(tmpdir(), 'tollbooth-ledger-'));
    return createSqliteLedgerStore({
      filename: join(sqliteDir, 'ledger.db'),
      tableName: `ledger_${namespace}`,
    });
  },
  {
    durable: true,
    shared: true,
    cleanup: async () => {
      if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
    },
  },
);

// Postgres: a schema of its own per run (dropped afterwards); each namespace is a table in it and
// every store opens its own pool, so two stores on one namespace are two independent connections.
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgSchema = `tollbooth_test_${randomBytes(6).toString('hex')}`;
async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable at DATABASE_URL=${databaseUrl} (${(error as Error).message}); start it or set DATABASE_URL`;
  } finally {
    await client.end().catch(() => {});
  }
}
describeLedgerStore(
  'Postgres',
  (namespace) =>
    createPostgresLedgerStore({
      connectionString: databaseUrl,
      schema: pgSchema,
      tableName: `ledger_${namespace}`,
    }),
  {
    durable: true,
    shared: true,
    unavailable: await postgresProblem(),
    cleanup: async () => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`);
      await client.end();
    },
  },
);

// Redis: a key prefix of its own per run (every key under it is deleted afterwards); each store
// opens its own connection from the URL, so two stores on one namespace are two clients.
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisRun = `tollbooth-test:${randomBytes(6).toString('hex')}:`;
const probeRedis = () =>
  new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
async function redisProblem(): Promise<string | undefined> {
  const client = probeRedis();
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return `Redis is not reachable at REDIS_URL=${redisUrl} (${(error as Error).message}); start it or set REDIS_URL`;
  } finally {
    client.disconnect();
  }
}
describeLedgerStore(
  'Redis',
  (namespace) => createRedisLedgerStore({ redis: redisUrl, keyPrefix: `${redisRun}${namespace}:` }),
  {
    durable: true,
    shared: true,
    unavailable: await redisProblem(),
    cleanup: async () => {
      const client = probeRedis();
      await client.connect();
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${redisRun}*`, 'COUNT', 1000);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      await client.quit();
    },
  },
);
