import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { createKyselyHistoryStore } from './kysely-store';
import type { HistoryDatabase } from './schema';
import type { HistoryStore } from './types';

const INT8_OID = 20;
const PG_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the SQLite history in `filename` (`:memory:` for a private in-memory one); the directory
 * is created. WAL mode, so the service's readers never wait for the recorder's writes.
 * @example const history = openSqliteHistory('.tollbooth/observatory.sqlite');
 */
export function openSqliteHistory(filename: string): HistoryStore {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  const database = new Database(filename);
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  const db = new Kysely<HistoryDatabase>({ dialect: new SqliteDialect({ database }) });
  return createKyselyHistoryStore({ db, dialect: 'sqlite', onClose: () => db.destroy() });
}

/**
 * Opens the PostgreSQL history (several instances share it; one records, elected by a lease).
 * @param options.schema tables' schema, created when missing (default `public`)
 * @example const history = openPostgresHistory({ connectionString: 'postgres://fees@db/fees' });
 */
export function openPostgresHistory(options: {
  connectionString?: string;
  pool?: pg.Pool;
  schema?: string;
  max?: number;
}): HistoryStore {
  if (options.schema !== undefined && !PG_IDENTIFIER.test(options.schema)) {
    throw new TypeError(`invalid history schema ${JSON.stringify(options.schema)}: use [a-z_][a-z0-9_]*`);
  }
  const owned = options.pool === undefined;
  const pool =
    options.pool ??
    new pg.Pool({
      connectionString: options.connectionString,
      max: options.max ?? 4,
      // 64-bit columns (times in ms, sats) hold integers far below 2^53: read them as numbers.
      types: {
        getTypeParser: ((oid: number, format?: string) =>
          oid === INT8_OID
            ? (value: string) => Number(value)
            : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
      },
    });
  const db = new Kysely<HistoryDatabase>({ dialect: new PostgresDialect({ pool }) });
  return createKyselyHistoryStore({
    db,
    dialect: 'postgres',
    ...(options.schema ? { schema: options.schema } : {}),
    onClose: async () => {
      // Kysely's destroy ends the pool; a caller's pool stays open.
      if (owned) await db.destroy();
    },
  });
}

/**
 * Opens the history named by a URL: `sqlite:<file>` (relative to `cwd`), `sqlite::memory:`, or
 * `postgres://…` (an optional `?schema=name` picks the tables' schema).
 */
export function openHistory(url: string, cwd = process.cwd()): HistoryStore {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    return openSqliteHistory(file === ':memory:' ? file : resolve(cwd, file));
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema') ?? undefined;
    parsed.searchParams.delete('schema');
    return openPostgresHistory({ connectionString: parsed.toString(), ...(schema ? { schema } : {}) });
  }
  throw new TypeError(`unsupported history URL ${url}: use sqlite:<file> or postgres://…`);
}
