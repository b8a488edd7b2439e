import { randomBytes } from 'node:crypto';
import type { LedgerEntry } from '@tollbooth/core';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createPostgresLedgerStore, type PostgresLedgerStoreOptions } from './postgres-store';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const probe = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
const reachable = await probe.connect().then(
  () => true,
  () => false,
);
await probe.end().catch(() => {});
if (!reachable && !process.env.CI) {
  console.warn(
    `[store-postgres] skipping server tests: PostgreSQL is not reachable at DATABASE_URL=${databaseUrl}`,
  );
}

const NAME_RULE = '/^[A-Za-z_][A-Za-z0-9_]{0,50}$/';

function buildEntry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  const now = Date.now();
  return {
    id: 'entry',
    state: 'claimed',
    resource: 'r',
    route: 'GET /r',
    network: 'n',
    payload: {},
    requirements: {},
    validBefore: 1,
    owner: 'o',
    leaseUntil: now,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + 60_000,
    ...overrides,
  };
}

/** The message of the invalid_config error the options are refused with. */
function refusal(options: unknown): string {
  try {
    createPostgresLedgerStore(options as PostgresLedgerStoreOptions);
  } catch (error) {
    expect(error).toMatchObject({ code: 'invalid_config' });
    return (error as Error).message;
  }
  throw new Error('the options were accepted');
}

describe('createPostgresLedgerStore', () => {
  // Never queried: the options are refused before the pool is used.
  const idle = new pg.Pool({ connectionString: databaseUrl });
  afterAll(async () => {
    await idle.end();
  });

  it('reports every invalid option at once', () => {
    expect(() => createPostgresLedgerStore({ schema: 'a"b', tableName: '1x', purgeIntervalMs: 1.5 })).toThrow(
      /exactly one of pool and connectionString.*schema.*tableName.*purgeIntervalMs/,
    );
  });

  it('lists the problems in one sentence, separated by semicolons', () => {
    expect(refusal({ schema: 'a"b', tableName: '1x', purgeIntervalMs: -1, logger: {} })).toBe(
      'Invalid Postgres ledger store options: give exactly one of pool and connectionString; ' +
        `schema must match ${NAME_RULE} (got a"b); tableName must match ${NAME_RULE} (got 1x); ` +
        'purgeIntervalMs must be a non-negative integer (got -1); ' +
        'logger must have a warn(fields, message) method (pino-compatible)',
    );
  });

  const name51 = `a${'b'.repeat(50)}`;
  it.each([
    ['neither pool nor connectionString', {}, 'give exactly one of pool and connectionString'],
    [
      'both pool and connectionString',
      { pool: idle, connectionString: databaseUrl },
      'give exactly one of pool and connectionString',
    ],
    ['a connectionString that is no string', { connectionString: 5 }, 'connectionString must be a string'],
    [
      'a schema with a hyphen',
      { pool: idle, schema: 'my-schema' },
      `schema must match ${NAME_RULE} (got my-schema)`,
    ],
    [
      'a schema of 52 characters',
      { pool: idle, schema: `${name51}c` },
      `schema must match ${NAME_RULE} (got ${name51}c)`,
    ],
    [
      'a schema that is no string, even one that reads as a name',
      { pool: idle, schema: ['ledger'] },
      `schema must match ${NAME_RULE} (got ledger)`,
    ],
    [
      'a tableName starting with a digit',
      { pool: idle, tableName: '1x' },
      `tableName must match ${NAME_RULE} (got 1x)`,
    ],
    [
      'a tableName that is no string, even one that reads as a name',
      { pool: idle, tableName: ['ledger'] },
      `tableName must match ${NAME_RULE} (got ledger)`,
    ],
    [
      'a negative purgeIntervalMs',
      { pool: idle, purgeIntervalMs: -1 },
      'purgeIntervalMs must be a non-negative integer (got -1)',
    ],
    [
      'a fractional purgeIntervalMs',
      { pool: idle, purgeIntervalMs: 1.5 },
      'purgeIntervalMs must be a non-negative integer (got 1.5)',
    ],
    [
      'a logger without warn',
      { pool: idle, logger: { info() {} } },
      'logger must have a warn(fields, message) method (pino-compatible)',
    ],
    [
      'a null logger',
      { pool: idle, logger: null },
      'logger must have a warn(fields, message) method (pino-compatible)',
    ],
  ])('refuses %s', (_label, options, problem) => {
    expect(refusal(options)).toBe(`Invalid Postgres ledger store options: ${problem}`);
  });

  it('adds no listener to a pool it is given', async () => {
    const before = idle.listenerCount('error');
    const store = createPostgresLedgerStore({
      pool: idle,
      schema: name51,
      tableName: name51,
      purgeIntervalMs: 0,
    });
    expect(idle.listenerCount('error')).toBe(before);
    await store.close();
  });

  describe('purging on its own', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('keeps a purge timer only while open and purgeIntervalMs is above 0', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const off = createPostgresLedgerStore({ pool: idle, purgeIntervalMs: 0 });
      expect(vi.getTimerCount()).toBe(0);
      const on = createPostgresLedgerStore({ pool: idle, purgeIntervalMs: 1 });
      expect(vi.getTimerCount()).toBe(1);
      await on.close();
      expect(vi.getTimerCount()).toBe(0);
      await off.close();
    });

    it('reports a failed purge round to its logger', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const url = new URL(databaseUrl);
      url.pathname = `/tollbooth_missing_${randomBytes(6).toString('hex')}`;
      let reported!: (warning: { fields: Record<string, unknown>; message: string }) => void;
      const warning = new Promise<{ fields: Record<string, unknown>; message: string }>((resolve) => {
        reported = resolve;
      });
      const store = createPostgresLedgerStore({
        connectionString: url.toString(),
        purgeIntervalMs: 1_000,
        logger: { warn: (fields, message) => reported({ fields, message }) },
      });
      try {
        vi.advanceTimersByTime(1_000);
        expect(await warning).toMatchObject({
          fields: { code: 'ledger_unavailable', err: expect.objectContaining({ code: '3D000' }) },
          message: 'ledger purge round failed',
        });
      } finally {
        await store.close();
      }
    });
  });

  describe.runIf(reachable || process.env.CI)('against the server', () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
    const schema = `tollbooth_unit_${randomBytes(6).toString('hex')}`;
    // The tests of purging write to a schema of their own: the migration test lists this one's indexes.
    const purgeSchema = `${schema}_purge`;
    afterAll(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${purgeSchema}" CASCADE`).catch(() => {});
      await pool.end();
    });

    it('writes to public.tollbooth_ledger by default, also for options given as undefined', async () => {
      // A database of this run, so the default schema and table are its own.
      const database = `tollbooth_unit_${randomBytes(6).toString('hex')}`;
      await pool.query(`CREATE DATABASE "${database}"`);
      const url = new URL(databaseUrl);
      url.pathname = `/${database}`;
      try {
        const store = createPostgresLedgerStore({
          connectionString: url.toString(),
          pool: undefined,
          schema: undefined,
          tableName: undefined,
          purgeIntervalMs: undefined,
          logger: undefined,
        });
        const now = Date.now();
        await store.claim({
          id: 'written',
          state: 'claimed',
          resource: 'r',
          route: 'GET /r',
          network: 'n',
          payload: {},
          requirements: {},
          validBefore: 1,
          owner: 'o',
          leaseUntil: now,
          createdAt: now,
          updatedAt: now,
          expiresAt: now + 60_000,
        });
        await store.close();
        const reader = new pg.Client({ connectionString: url.toString() });
        await reader.connect();
        try {
          const { rows } = await reader.query('SELECT id, state FROM public.tollbooth_ledger');
          expect(rows).toEqual([{ id: 'written', state: 'claimed' }]);
        } finally {
          await reader.end();
        }
      } finally {
        await pool.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      }
    });

    it('rolls a failed migration back and runs it again on the next call', async () => {
      // One connection: a transaction left open or aborted would be what the next query gets.
      const single = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      const broken = `${schema}_broken`;
      try {
        // A table of that name without the ledger's columns: the first index cannot be made.
        await single.query(`CREATE SCHEMA "${broken}"`);
        await single.query(`CREATE TABLE "${broken}".tollbooth_ledger (id text PRIMARY KEY)`);
        const store = createPostgresLedgerStore({ pool: single, schema: broken, purgeIntervalMs: 0 });
        await expect(store.get('x')).rejects.toThrow('column "state" does not exist');
        await expect(store.migrate()).rejects.toThrow('column "state" does not exist');
        // Nothing of it stays: not the column it added before failing, not the identifiers table.
        const columns = await single.query<{ column_name: string }>(
          'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY column_name',
          [broken],
        );
        expect(columns.rows.map((r) => r.column_name)).toEqual(['id']);
        await single.query(`DROP TABLE "${broken}".tollbooth_ledger`);
        expect(await store.get('x')).toBeUndefined();
        await store.claim(buildEntry({ id: 'after' }));
        const { rows } = await single.query(`SELECT id FROM "${broken}".tollbooth_ledger`);
        expect(rows).toEqual([{ id: 'after' }]);
        await store.close();
      } finally {
        await single.query(`DROP SCHEMA IF EXISTS "${broken}" CASCADE`);
        await single.end();
      }
    });

    it('adds the resolution column to a table made before it existed, keeping its entries', async () => {
      const old = `${schema}_old`;
      await pool.query(`CREATE SCHEMA "${old}"`);
      try {
        await pool.query(`CREATE TABLE "${old}".tollbooth_ledger (
          id text PRIMARY KEY, state text NOT NULL, resource text NOT NULL, route text NOT NULL,
          network text NOT NULL, payer text, payload jsonb, requirements jsonb, valid_before bigint NOT NULL,
          transaction_hash text, receipt jsonb, response_status integer, response_headers jsonb,
          response_body bytea, error jsonb, owner text NOT NULL, lease_until bigint NOT NULL,
          created_at bigint NOT NULL, updated_at bigint NOT NULL, expires_at bigint NOT NULL)`);
        await pool.query(`INSERT INTO "${old}".tollbooth_ledger VALUES ('old', 'uncertain', 'r', 'GET /r', 'n',
          NULL, '{}', '{}', 1, NULL, NULL, NULL, NULL, NULL, NULL, 'a:1', 0, 1, 1, 9999999999999)`);
        const store = createPostgresLedgerStore({ pool, schema: old, purgeIntervalMs: 0 });
        expect(await store.get('old')).toMatchObject({ id: 'old', state: 'uncertain', owner: 'a:1' });
        expect((await store.get('old'))?.resolution).toBeUndefined();
        const resolution = {
          by: 'reconciler' as const,
          instance: 'b',
          at: 2,
          from: 'uncertain' as const,
          action: 'unresolved' as const,
          attempts: 1,
        };
        expect(
          (await store.update('old', { state: ['uncertain'] }, { state: 'uncertain', resolution }))
            ?.resolution,
        ).toEqual(resolution);
        await store.close();
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`);
      }
    });

    it('adds the version column to an identifier table made before it existed: old bindings are version 1', async () => {
      const old = `${schema}_old_ids`;
      await pool.query(`CREATE SCHEMA "${old}"`);
      try {
        await pool.query(`CREATE TABLE "${old}".tollbooth_ledger_identifiers (key text PRIMARY KEY,
          fingerprint text NOT NULL, entry text NOT NULL, created_at bigint NOT NULL, expires_at bigint NOT NULL)`);
        await pool.query(
          `INSERT INTO "${old}".tollbooth_ledger_identifiers VALUES ('k', 'f', 'e', 1, 9999999999999)`,
        );
        const store = createPostgresLedgerStore({ pool, schema: old, purgeIntervalMs: 0 });
        const bound = {
          key: 'k',
          fingerprint: 'f',
          entry: 'e',
          version: 1,
          createdAt: 1,
          expiresAt: 9999999999999,
        };
        expect(await store.getIdentifier('k')).toEqual(bound);
        const next = { key: 'k', fingerprint: 'g', entry: 'n', createdAt: 2, expiresAt: 9999999999999 };
        expect(await store.bindIdentifier(next, { entry: 'e', version: 1 })).toEqual({
          bound: true,
          binding: { ...next, version: 2 },
        });
        await store.close();
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`);
      }
    });

    it('ends the pool it made when closed, and only that pool', async () => {
      // pool.end() resolves before the server has dropped the connections, so the call itself is
      // what the test watches (passed through to pg).
      const ended = vi.spyOn(pg.Pool.prototype, 'end');
      try {
        const owned = createPostgresLedgerStore({
          connectionString: databaseUrl,
          schema: purgeSchema,
          tableName: 'owned',
          purgeIntervalMs: 0,
        });
        const given = createPostgresLedgerStore({
          pool,
          schema: purgeSchema,
          tableName: 'owned',
          purgeIntervalMs: 0,
        });
        expect(await owned.get('x')).toBeUndefined();
        expect(await given.get('x')).toBeUndefined();
        await given.close();
        expect(ended).not.toHaveBeenCalled();
        await owned.close();
        expect(ended).toHaveBeenCalledTimes(1);
        expect(ended.mock.contexts[0]).not.toBe(pool);
      } finally {
        ended.mockRestore();
      }
    });

    it('counts the bindings it purges along with the entries', async () => {
      const store = createPostgresLedgerStore({
        pool,
        schema: purgeSchema,
        tableName: 'counted',
        purgeIntervalMs: 0,
      });
      const now = Date.now();
      await store.claim(buildEntry({ id: 'gone', state: 'rejected', expiresAt: now - 1 }));
      await store.bindIdentifier({
        key: 'k',
        fingerprint: 'f',
        entry: 'gone',
        createdAt: now,
        expiresAt: now - 1,
      });
      await store.bindIdentifier({
        key: 'k2',
        fingerprint: 'f',
        entry: 'other',
        createdAt: now,
        expiresAt: now - 1,
      });
      expect(await store.purgeExpired(now)).toBe(3);
      expect(await store.purgeExpired(now)).toBe(0);
      await store.close();
    });

    describe('a row that goes between the write and the read of one call', () => {
      /**
       * A pool whose queries run as they are, but the first write of `prefix` that changes no row
       * (a conflict) is followed by `meanwhile`, before the store reads what was in the way.
       */
      function racing(prefix: string, meanwhile: () => Promise<unknown>): pg.Pool {
        const racy = new pg.Pool({ connectionString: databaseUrl, max: 2 });
        const query = racy.query.bind(racy) as (...args: unknown[]) => Promise<pg.QueryResult>;
        let raced = false;
        vi.spyOn(racy, 'query').mockImplementation((async (...args: unknown[]) => {
          const result = await query(...args);
          if (!raced && String(args[0]).trimStart().startsWith(prefix) && result.rowCount === 0) {
            raced = true;
            await meanwhile();
          }
          return result;
        }) as never);
        return racy;
      }

      afterEach(() => {
        vi.restoreAllMocks();
      });

      it('claims again an entry removed between its conflicting insert and the read of it', async () => {
        const table = `"${purgeSchema}".raced`;
        const racy = racing('INSERT INTO', () => pool.query(`DELETE FROM ${table} WHERE id = 'raced'`));
        const store = createPostgresLedgerStore({
          pool: racy,
          schema: purgeSchema,
          tableName: 'raced',
          purgeIntervalMs: 0,
        });
        try {
          await store.claim(buildEntry({ id: 'raced', owner: 'first' }));
          const second = await store.claim(buildEntry({ id: 'raced', owner: 'second' }));
          expect(second).toMatchObject({ acquired: true, entry: { id: 'raced', owner: 'second' } });
          expect((await pool.query(`SELECT owner FROM ${table}`)).rows).toEqual([{ owner: 'second' }]);
        } finally {
          await store.close();
          await racy.end();
        }
      });

      it('binds again a key whose binding was purged between its conflicting upsert and the read of it', async () => {
        const identifiers = `"${purgeSchema}".raced_ids_identifiers`;
        const racy = racing('INSERT INTO', () => pool.query(`DELETE FROM ${identifiers} WHERE key = 'k'`));
        const store = createPostgresLedgerStore({
          pool: racy,
          schema: purgeSchema,
          tableName: 'raced_ids',
          purgeIntervalMs: 0,
        });
        const now = Date.now();
        const binding = (entry: string) => ({
          key: 'k',
          fingerprint: entry,
          entry,
          createdAt: now,
          expiresAt: now + 1,
        });
        try {
          const stored = (entry: string) => ({ ...binding(entry), version: 1 });
          expect(await store.bindIdentifier(binding('first'))).toEqual({
            bound: true,
            binding: stored('first'),
          });
          expect(await store.bindIdentifier(binding('second'))).toEqual({
            bound: true,
            binding: stored('second'),
          });
          expect(await store.getIdentifier('k')).toEqual(stored('second'));
        } finally {
          await store.close();
          await racy.end();
        }
      });
    });

    it('purges expired entries on its own every purgeIntervalMs', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      // One connection: the purge's DELETE, started first, runs before the reads that follow.
      const single = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      const store = createPostgresLedgerStore({
        pool: single,
        schema: purgeSchema,
        tableName: 'timed',
        purgeIntervalMs: 1_000,
      });
      try {
        await store.claim(buildEntry({ id: 'expired', state: 'rejected', expiresAt: Date.now() - 1 }));
        vi.advanceTimersByTime(999);
        expect(await store.get('expired')).toBeDefined();
        vi.advanceTimersByTime(1);
        expect(await store.get('expired')).toBeUndefined();
      } finally {
        vi.useRealTimers();
        await store.close();
        await single.end();
      }
    });

    it('migrates idempotently from several stores at once and leaves a given pool open', async () => {
      const stores = Array.from({ length: 4 }, () =>
        createPostgresLedgerStore({ pool, schema, purgeIntervalMs: 0 }),
      );
      await Promise.all(stores.flatMap((store) => [store.migrate(), store.migrate()]));
      const { rows } = await pool.query<{ indexname: string }>(
        'SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
        [schema],
      );
      expect(rows.map((r) => r.indexname)).toEqual([
        'tollbooth_ledger_access_expires_idx',
        'tollbooth_ledger_access_granted_idx',
        'tollbooth_ledger_access_pkey',
        'tollbooth_ledger_access_subject_idx',
        'tollbooth_ledger_created_idx',
        'tollbooth_ledger_expires_idx',
        'tollbooth_ledger_identifiers_pkey',
        'tollbooth_ledger_ids_expires_idx',
        'tollbooth_ledger_nonces_expires_idx',
        'tollbooth_ledger_nonces_pkey',
        'tollbooth_ledger_payer_idx',
        'tollbooth_ledger_pkey',
        'tollbooth_ledger_reservations_key_idx',
        'tollbooth_ledger_reservations_pkey',
        'tollbooth_ledger_state_idx',
        'tollbooth_ledger_transaction_idx',
      ]);
      await Promise.all(stores.map((store) => store.close()));
      expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
      await expect(stores[0]!.get('x')).rejects.toMatchObject({ code: 'ledger_unavailable' });
    });
  });
});
