// #38 part 5: a paid request waits for the disk at most twice — the write before money moves
// (`settling`) and the final one — on SQLite and PostgreSQL (docs/ledger.md#durability). Read
// from the databases themselves, not from the store's code: SQLite's fsyncs counted with strace
// around a child process making paid requests on a reopened ledger file; PostgreSQL's
// `synchronous_commit` in effect in each write's own transaction (recorded by a trigger), and,
// when this machine can trace the server's backend, the fsyncs that backend made.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresLedgerStore } from '@tollbooth/store-postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ledgerOver, paidRequest } from './support/ledger-paid-request';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const REQUESTS = 10;
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-sync-commits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fsyncLine = /\b(fsync|fdatasync)\(/;
const hasStrace = (() => {
  try {
    execFileSync('strace', ['-qq', '-e', 'trace=none', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// Skipped only off CI: .ci/run installs strace and starts PostgreSQL, so there a missing one fails.
const offCi = !process.env['CI'];
describe.skipIf(offCi && !hasStrace)('SQLite: fsyncs per paid request (strace)', () => {
  const fsyncsOf = (mode: 'after' | 'before'): number => {
    const trace = join(dir, `trace-${mode}`);
    execFileSync(
      'strace',
      [
        '-f',
        '-qq',
        '-e',
        'trace=fsync,fdatasync,write',
        '-e',
        'signal=none',
        '-o',
        trace,
        process.execPath,
      ].concat(['--conditions=tollbooth-source', '--import', 'tsx', 'test/support/sqlite-sync-child.ts']),
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          SYNC_SQLITE_FILE: join(dir, `ledger-${mode}.db`),
          SYNC_REQUESTS: String(REQUESTS),
          SYNC_MODE: mode,
        },
        stdio: 'ignore',
      },
    );
    const lines = readFileSync(trace, 'utf8').split('\n');
    const begin = lines.findIndex((l) => l.includes('tollbooth-sync-begin'));
    const end = lines.findIndex((l) => l.includes('tollbooth-sync-end'));
    expect(begin).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(begin);
    return lines.slice(begin + 1, end).filter((l) => fsyncLine.test(l)).length;
  };

  // Exactly two: fewer would mean the settling or the final write is not on disk when it returns.
  it('a request settling after its handler syncs twice: settling, then settled', () => {
    expect(fsyncsOf('after')).toBe(2 * REQUESTS);
  }, 60_000);

  it('a request settling before its handler syncs twice: settling, then its answer', () => {
    expect(fsyncsOf('before')).toBe(2 * REQUESTS);
  }, 60_000);
});

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgProblem = await (async () => {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable at DATABASE_URL=${databaseUrl} (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
})();

describe.skipIf(offCi && pgProblem !== undefined)('PostgreSQL: synchronous commits per paid request', () => {
  const schema = `tollbooth_sync_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  /** Runs the requests on one connection; what each write transaction committed with, and the backend's fsyncs. */
  const measure = async (mode: 'after' | 'before') => {
    const tableName = `ledger_${mode}`;
    const table = `"${schema}"."${tableName}"`;
    const commitsTable = `"${schema}"."${tableName}_commits"`;
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    const store = createPostgresLedgerStore({ pool, schema, tableName, purgeIntervalMs: 0 });
    const ledger = ledgerOver(store);
    let tracer: ChildProcess | undefined;
    try {
      await store.migrate();
      // Every row written records its transaction and the synchronous_commit it will commit with.
      await admin.query(`
        CREATE TABLE ${commitsTable} (xid xid8, setting text);
        CREATE FUNCTION "${schema}".${tableName}_log() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO ${commitsTable} VALUES (pg_current_xact_id(), current_setting('synchronous_commit'));
            RETURN NULL;
          END $$;
        CREATE TRIGGER log_commit AFTER INSERT OR UPDATE OR DELETE ON ${table}
          FOR EACH ROW EXECUTE FUNCTION "${schema}".${tableName}_log();`);
      await paidRequest(ledger, mode); // warm
      await admin.query(`TRUNCATE ${commitsTable}`);
      const backend = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const trace = join(dir, `pg-trace-${mode}`);
      if (hasStrace) {
        tracer = spawn('strace', ['-qq', '-e', 'trace=fsync,fdatasync', '-o', trace, '-p', String(backend)], {
          stdio: 'ignore',
        });
        await new Promise((r) => setTimeout(r, 500));
      }
      for (let i = 0; i < REQUESTS; i++) await paidRequest(ledger, mode);
      let fsyncs: number | undefined;
      if (tracer && tracer.exitCode === null) {
        const exited = new Promise((r) => tracer!.once('exit', r));
        tracer.kill('SIGINT');
        await exited;
        tracer = undefined;
        fsyncs = readFileSync(trace, 'utf8')
          .split('\n')
          .filter((l) => fsyncLine.test(l)).length;
      }
      const { rows } = await admin.query<{ setting: string; transactions: string }>(
        `SELECT setting, count(DISTINCT xid)::text AS transactions FROM ${commitsTable} GROUP BY setting`,
      );
      const commits = Object.fromEntries(rows.map((r) => [r.setting, Number(r.transactions)]));
      return { synchronous: commits['on'] ?? 0, relaxed: commits['off'] ?? 0, fsyncs };
    } finally {
      tracer?.kill('SIGINT');
      ledger.leases.stop();
      await store.close();
      await pool.end();
    }
  };

  for (const mode of ['after', 'before'] as const) {
    it(`a request settling ${mode} its handler commits synchronously twice, twice not`, async () => {
      const { synchronous, relaxed, fsyncs } = await measure(mode);
      expect({ synchronous, relaxed }).toEqual({ synchronous: 2 * REQUESTS, relaxed: 2 * REQUESTS });
      // The backend flushed the log itself at most once per synchronous commit (a concurrent
      // commit's flush may have covered one of them); a relaxed commit never waits for it.
      if (fsyncs !== undefined) expect(fsyncs).toBeLessThanOrEqual(2 * REQUESTS);
    }, 60_000);
  }
});
