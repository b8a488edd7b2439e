import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresLedgerStore } from './postgres-store';

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

describe('createPostgresLedgerStore', () => {
  it('reports every invalid option at once', () => {
    expect(() => createPostgresLedgerStore({ schema: 'a"b', tableName: '1x', purgeIntervalMs: 1.5 })).toThrow(
      /exactly one of pool and connectionString.*schema.*tableName.*purgeIntervalMs/,
    );
  });

  describe.runIf(reachable || process.env.CI)('against the server', () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
    const schema = `tollbooth_unit_${randomBytes(6).toString('hex')}`;
    afterAll(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    });

    it('writes to public.tollbooth_ledger by default', async () => {
      // A database of this run, so the default schema and table are its own.
      const database = `tollbooth_unit_${randomBytes(6).toString('hex')}`;
      await pool.query(`CREATE DATABASE "${database}"`);
      const url = new URL(databaseUrl);
      url.pathname = `/${database}`;
      try {
        const store = createPostgresLedgerStore({ connectionString: url.toString(), purgeIntervalMs: 0 });
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
        'tollbooth_ledger_created_idx',
        'tollbooth_ledger_expires_idx',
        'tollbooth_ledger_identifiers_pkey',
        'tollbooth_ledger_ids_expires_idx',
        'tollbooth_ledger_payer_idx',
        'tollbooth_ledger_pkey',
        'tollbooth_ledger_state_idx',
        'tollbooth_ledger_transaction_idx',
      ]);
      await Promise.all(stores.map((store) => store.close()));
      expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
      await expect(stores[0]!.get('x')).rejects.toMatchObject({ code: 'ledger_unavailable' });
    });
  });
});
