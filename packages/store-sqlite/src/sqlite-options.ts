import { TollboothError } from '@tollbooth/core';
import type Database from 'better-sqlite3';

/** Options of {@link createSqliteLedgerStore}: give exactly one of `filename` and `database`. */
export interface SqliteLedgerStoreOptions {
  /** Path of the database file (created if missing); the store opens and closes it. `:memory:` works but is not durable. */
  filename?: string;
  /** An open better-sqlite3 database to use instead; the store never closes it nor changes its pragmas. */
  database?: Database.Database;
  /** Name of the ledger table (created if missing). Letters, digits and `_`. */
  tableName?: string;
  /** How long a write waits for another connection's lock before failing, in ms (owned database only). */
  busyTimeoutMs?: number;
  /** How often expired entries are purged automatically, in ms; `0` turns it off. The timer is unref'd. */
  purgeIntervalMs?: number;
}

/** Defaults of {@link SqliteLedgerStoreOptions}. */
export const SQLITE_LEDGER_STORE_DEFAULTS: Readonly<{
  tableName: string;
  busyTimeoutMs: number;
  purgeIntervalMs: number;
}> = Object.freeze({
  tableName: 'tollbooth_ledger',
  busyTimeoutMs: 5_000,
  purgeIntervalMs: 60_000,
});

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function resolveOptions(options: SqliteLedgerStoreOptions) {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved = { ...SQLITE_LEDGER_STORE_DEFAULTS, ...given } as typeof SQLITE_LEDGER_STORE_DEFAULTS &
    SqliteLedgerStoreOptions;
  const problems: string[] = [];
  if ((resolved.filename === undefined) === (resolved.database === undefined)) {
    problems.push('give exactly one of filename and database');
  }
  if (
    resolved.filename !== undefined &&
    (typeof resolved.filename !== 'string' || resolved.filename === '')
  ) {
    problems.push('filename must be a non-empty string');
  }
  if (typeof resolved.tableName !== 'string' || !IDENTIFIER.test(resolved.tableName)) {
    problems.push(`tableName must match ${IDENTIFIER} (got ${String(resolved.tableName)})`);
  }
  for (const key of ['busyTimeoutMs', 'purgeIntervalMs'] as const) {
    const value = resolved[key];
    if (!Number.isSafeInteger(value) || value < 0) {
      problems.push(`${key} must be a non-negative integer (got ${String(value)})`);
    }
  }
  if (problems.length > 0) {
    throw new TollboothError('invalid_config', `Invalid SQLite ledger store options: ${problems.join('; ')}`);
  }
  return resolved;
}
