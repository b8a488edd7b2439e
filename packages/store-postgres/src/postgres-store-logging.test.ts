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

describe.runIf(reachable || process.env.CI)('createPostgresLedgerStore with its own pool', () => {
  const admin = new pg.Pool({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
  const schema = `tollbooth_log_${randomBytes(6).toString('hex')}`;
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
  });

  it('reports an idle connection the server ended to its logger, and the next query still works', async () => {
    const application = `tollbooth_log_${randomBytes(6).toString('hex')}`;
    const url = new URL(databaseUrl);
    url.searchParams.set('application_name', application);
    const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
    let warned!: () => void;
    const firstWarning = new Promise<void>((resolve) => {
      warned = resolve;
    });
    const store = createPostgresLedgerStore({
      connectionString: url.toString(),
      schema,
      purgeIntervalMs: 0,
      logger: {
        warn(fields, message) {
          warnings.push({ fields, message });
          warned();
        },
      },
    });
    try {
      await store.migrate(); // leaves an idle connection in the store's pool
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [application],
      );
      await firstWarning;
      expect(warnings[0]).toMatchObject({
        fields: { code: 'ledger_unavailable', err: expect.any(Error) },
        message: 'Postgres ledger connection lost',
      });
      expect(await store.get('nothing')).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
