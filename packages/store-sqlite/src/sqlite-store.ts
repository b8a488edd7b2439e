import {
  type ClaimResult,
  LEDGER_QUERY_DEFAULT_LIMIT,
  type LedgerEntry,
  type LedgerExpectation,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerState,
  type LedgerStore,
  type PaymentIdentity,
  TollboothError,
} from '@tollbooth/core';
import Database from 'better-sqlite3';

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

interface Row {
  id: string;
  state: LedgerState;
  resource: string;
  route: string;
  network: string;
  payer: string | null;
  payload: string | null;
  requirements: string | null;
  valid_before: number;
  transaction_hash: string | null;
  receipt: string | null;
  response_status: number | null;
  response_headers: string | null;
  response_body: Buffer | null;
  error: string | null;
  owner: string;
  lease_until: number;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

type Value = string | number | Buffer | null;

const toJson = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
const fromJson = (text: string | null): unknown => (text === null ? undefined : JSON.parse(text));

/** Columns and values for the fields of an entry or a patch; `undefined` fields are left out. */
function toColumns(fields: Partial<LedgerEntry>): Array<[string, Value]> {
  const columns: Array<[string, Value]> = [];
  const put = (column: string, value: Value | undefined) => {
    if (value !== undefined) columns.push([column, value]);
  };
  put('id', fields.id);
  put('state', fields.state);
  put('resource', fields.resource);
  put('route', fields.route);
  put('network', fields.network);
  put('payer', fields.payer);
  if (fields.payload !== undefined) put('payload', toJson(fields.payload));
  if (fields.requirements !== undefined) put('requirements', toJson(fields.requirements));
  put('valid_before', fields.validBefore);
  put('transaction_hash', fields.transaction);
  if (fields.receipt !== undefined) put('receipt', toJson(fields.receipt));
  if (fields.response !== undefined) {
    const { status, headers, body } = fields.response;
    put('response_status', status);
    put('response_headers', JSON.stringify(headers));
    put('response_body', Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  }
  if (fields.error !== undefined) put('error', JSON.stringify(fields.error));
  put('owner', fields.owner);
  put('lease_until', fields.leaseUntil);
  put('created_at', fields.createdAt);
  put('updated_at', fields.updatedAt);
  put('expires_at', fields.expiresAt);
  return columns;
}

function fromRow(row: Row): LedgerEntry {
  const entry: LedgerEntry = {
    id: row.id,
    state: row.state,
    resource: row.resource,
    route: row.route,
    network: row.network,
    payload: fromJson(row.payload),
    requirements: fromJson(row.requirements),
    validBefore: row.valid_before,
    owner: row.owner,
    leaseUntil: row.lease_until,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  };
  if (row.payer !== null) entry.payer = row.payer;
  if (row.transaction_hash !== null) entry.transaction = row.transaction_hash;
  if (row.receipt !== null) entry.receipt = JSON.parse(row.receipt);
  if (row.response_status !== null) {
    entry.response = {
      status: row.response_status,
      headers: JSON.parse(row.response_headers ?? '{}'),
      body: row.response_body === null ? new Uint8Array(0) : new Uint8Array(row.response_body),
    };
  }
  if (row.error !== null) entry.error = JSON.parse(row.error);
  return entry;
}

function resolveOptions(options: SqliteLedgerStoreOptions) {
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

function schema(table: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${table} (
      id               TEXT PRIMARY KEY NOT NULL,
      state            TEXT NOT NULL,
      resource         TEXT NOT NULL,
      route            TEXT NOT NULL,
      network          TEXT NOT NULL,
      payer            TEXT,
      payload          TEXT,
      requirements     TEXT,
      valid_before     INTEGER NOT NULL,
      transaction_hash TEXT,
      receipt          TEXT,
      response_status  INTEGER,
      response_headers TEXT,
      response_body    BLOB,
      error            TEXT,
      owner            TEXT NOT NULL,
      lease_until      INTEGER NOT NULL,
      created_at       INTEGER NOT NULL,
      updated_at       INTEGER NOT NULL,
      expires_at       INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS ${table}_state_idx ON ${table} (state, created_at);
    CREATE INDEX IF NOT EXISTS ${table}_transaction_idx ON ${table} (transaction_hash) WHERE transaction_hash IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ${table}_payer_idx ON ${table} (payer, created_at) WHERE payer IS NOT NULL;
    CREATE INDEX IF NOT EXISTS ${table}_created_idx ON ${table} (created_at);
    CREATE INDEX IF NOT EXISTS ${table}_expires_idx ON ${table} (expires_at);
  `;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * Creates a {@link LedgerStore} in a SQLite database (better-sqlite3): the embedded default of the
 * fee service. Entries survive restarts; several processes may share one file (WAL mode, writes
 * wait `busyTimeoutMs` for each other). A claim is `INSERT … ON CONFLICT DO NOTHING` and a read in
 * one immediate transaction; updates and removes are compare-and-set `WHERE state IN (…) [AND
 * owner = ?]`. Response bodies are BLOBs, JSON fields TEXT, times epoch ms.
 *
 * @param options - `filename` or `database`; `tableName` (default `tollbooth_ledger`),
 *   `busyTimeoutMs` (default 5000), `purgeIntervalMs` (default 60 000, 0 = off).
 * @throws {TollboothError} `invalid_config`, listing every problem.
 * @example
 * ```ts
 * import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
 *
 * const ledger = createSqliteLedgerStore({ filename: './data/ledger.db' });
 * // … pass `ledger` to the gate; on shutdown:
 * await ledger.close();
 * ```
 */
export function createSqliteLedgerStore(options: SqliteLedgerStoreOptions): LedgerStore {
  const resolved = resolveOptions(options);
  const table = resolved.tableName;
  const owned = resolved.database === undefined;
  const db = resolved.database ?? new Database(resolved.filename!);
  if (owned) {
    db.pragma('journal_mode = WAL');
    db.pragma(`busy_timeout = ${resolved.busyTimeoutMs}`);
  }
  db.exec(schema(table));

  const selectById = db.prepare<[string], Row>(`SELECT * FROM ${table} WHERE id = ?`);
  const purge = db.prepare<[number]>(`DELETE FROM ${table} WHERE expires_at < ?`);
  const statements = new Map<string, Database.Statement>();
  const cached = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };

  const claim = db.transaction((entry: LedgerEntry): ClaimResult => {
    const columns = toColumns(entry);
    const inserted = cached(
      `INSERT INTO ${table} (${columns.map(([c]) => c).join(', ')}) VALUES (${placeholders(columns.length)})
       ON CONFLICT (id) DO NOTHING`,
    ).run(...columns.map(([, v]) => v));
    const row = selectById.get(entry.id)!;
    return { acquired: inserted.changes === 1, entry: fromRow(row) };
  });

  const condition = (expect: LedgerExpectation): { sql: string; params: Value[] } => {
    let sql = `id = ? AND state IN (${placeholders(expect.state.length)})`;
    const params: Value[] = [...expect.state];
    if (expect.owner !== undefined) {
      sql += ' AND owner = ?';
      params.push(expect.owner);
    }
    return { sql, params };
  };

  let closed = false;
  const assertOpen = () => {
    if (closed) throw new TollboothError('ledger_unavailable', 'The SQLite ledger store is closed');
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  if (resolved.purgeIntervalMs > 0) {
    timer = setInterval(() => {
      try {
        purge.run(Date.now());
      } catch {
        // A locked or closed database: the next round (or an explicit purgeExpired) tries again.
      }
    }, resolved.purgeIntervalMs);
    timer.unref();
  }

  return {
    async claim(entry) {
      assertOpen();
      return claim.immediate(entry);
    },

    async get(id: PaymentIdentity) {
      assertOpen();
      const row = selectById.get(id);
      return row ? fromRow(row) : undefined;
    },

    async update(id: PaymentIdentity, expect: LedgerExpectation, patch: LedgerPatch) {
      assertOpen();
      if (expect.state.length === 0) return undefined;
      const {
        id: _id,
        createdAt: _c,
        updatedAt: _u,
        ...fields
      } = patch as LedgerPatch & Partial<LedgerEntry>;
      const columns = toColumns(fields);
      columns.push(['updated_at', Date.now()]);
      const where = condition(expect);
      const row = cached(
        `UPDATE ${table} SET ${columns.map(([c]) => `${c} = ?`).join(', ')} WHERE ${where.sql} RETURNING *`,
      ).get(...columns.map(([, v]) => v), id, ...where.params) as Row | undefined;
      return row ? fromRow(row) : undefined;
    },

    async remove(id: PaymentIdentity, expect: LedgerExpectation) {
      assertOpen();
      if (expect.state.length === 0) return false;
      const where = condition(expect);
      return cached(`DELETE FROM ${table} WHERE ${where.sql}`).run(id, ...where.params).changes === 1;
    },

    async query(query: LedgerQuery) {
      assertOpen();
      const limit = query.limit ?? LEDGER_QUERY_DEFAULT_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 0) {
        throw new TollboothError('invalid_config', `limit must be a non-negative integer (got ${limit})`);
      }
      const clauses: string[] = [];
      const params: Value[] = [];
      if (query.id !== undefined) {
        clauses.push('id = ?');
        params.push(query.id);
      }
      if (query.state !== undefined) {
        const states = typeof query.state === 'string' ? [query.state] : query.state;
        if (states.length === 0) return [];
        clauses.push(`state IN (${placeholders(states.length)})`);
        params.push(...states);
      }
      if (query.transaction !== undefined) {
        clauses.push('transaction_hash = ?');
        params.push(query.transaction);
      }
      if (query.payer !== undefined) {
        clauses.push('payer = ?');
        params.push(query.payer);
      }
      const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
      const rows = cached(`SELECT * FROM ${table} ${where} ORDER BY created_at DESC, id DESC LIMIT ?`).all(
        ...params,
        limit,
      ) as Row[];
      return rows.map(fromRow);
    },

    async purgeExpired(now: number) {
      assertOpen();
      return purge.run(now).changes;
    },

    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      if (owned) db.close();
    },
  };
}
