import {
  type AccessStore,
  type BindResult,
  type ClaimResult,
  LEDGER_ERROR_STATUS,
  type LedgerEntry,
  type LedgerExpectation,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerStore,
  type LedgerWriteOptions,
  type NewIdentifierBinding,
  type PaymentIdentity,
  type ReplacedBinding,
  type ReservationStore,
  TollboothError,
} from '@tollbooth/core';
import {
  assertLedgerInvariant,
  fromLedgerRow,
  LEDGER_QUERY_DEFAULT_LIMIT,
  type LedgerColumnValue,
  type LedgerRow,
  settlesWithStoredResponse,
  toLedgerColumns,
} from '@tollbooth/core/ledger';
import Database from 'better-sqlite3';
import { accessSchema, createSqliteAccess } from './sqlite-access';
import { fromIdentifierRow, type IdentifierRow } from './sqlite-identifier-row';
import { resolveOptions, type SqliteLedgerStoreOptions } from './sqlite-options';
import { createSqliteReservations, reservationSchema } from './sqlite-reservations';

export { SQLITE_LEDGER_STORE_DEFAULTS, type SqliteLedgerStoreOptions } from './sqlite-options';

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
      resolution       TEXT,
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
    CREATE TABLE IF NOT EXISTS ${table}_identifiers (
      key         TEXT PRIMARY KEY NOT NULL,
      fingerprint TEXT NOT NULL,
      entry       TEXT NOT NULL,
      version     INTEGER NOT NULL DEFAULT 1,
      created_at  INTEGER NOT NULL,
      expires_at  INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS ${table}_identifiers_expires_idx ON ${table}_identifiers (expires_at);
  `;
}

/**
 * Entries no purge deletes, whatever their `expires_at` (docs/ledger.md#purging): a settled one
 * without its answer, and one whose charge the reconciler has yet to resolve.
 */
const KEPT_PAST_EXPIRY =
  "(state IN ('settling', 'uncertain') OR (state = 'settled' AND response_status IS NULL))";

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
export function createSqliteLedgerStore(
  options: SqliteLedgerStoreOptions,
): LedgerStore & AccessStore & ReservationStore {
  const resolved = resolveOptions(options);
  const table = resolved.tableName;
  const owned = resolved.database === undefined;
  const db = resolved.database ?? new Database(resolved.filename!);
  if (owned) {
    db.pragma('journal_mode = WAL');
    db.pragma(`busy_timeout = ${resolved.busyTimeoutMs}`);
    // Explicitly: better-sqlite3 builds SQLite to open an existing WAL database at NORMAL, which
    // would commit every write without waiting for the disk once the file exists.
    db.pragma('synchronous = FULL');
  }
  db.exec(schema(table) + accessSchema(table) + reservationSchema(table));
  // Tables made before a column existed get it (SQLite has no ADD COLUMN IF NOT EXISTS).
  const hasColumn = (name: string, column: string): boolean =>
    db
      .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${name}')`)
      .all()
      .some((found) => found.name === column);
  if (!hasColumn(table, 'resolution')) db.exec(`ALTER TABLE ${table} ADD COLUMN resolution TEXT`);
  if (!hasColumn(`${table}_identifiers`, 'version'))
    db.exec(`ALTER TABLE ${table}_identifiers ADD COLUMN version INTEGER NOT NULL DEFAULT 1`);

  const selectById = db.prepare<[string], LedgerRow>(`SELECT * FROM ${table} WHERE id = ?`);
  // A settled entry without its answer is kept (its payer is served whenever it retries), and so is
  // an unresolved charge and a binding naming either (docs/ledger.md#purging).
  const purgeEntries = db.prepare<[number]>(
    `DELETE FROM ${table} WHERE expires_at < ? AND NOT ${KEPT_PAST_EXPIRY}`,
  );
  const purgeIdentifiers = db.prepare<[number]>(
    `DELETE FROM ${table}_identifiers WHERE expires_at < ? AND NOT EXISTS
       (SELECT 1 FROM ${table} WHERE id = ${table}_identifiers.entry AND ${KEPT_PAST_EXPIRY})`,
  );
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new TollboothError('ledger_unavailable', 'The SQLite ledger store is closed');
  };
  const access = createSqliteAccess(db, table, assertOpen);
  const reservations = createSqliteReservations(db, table, assertOpen);
  const purge = db.transaction(
    (now: number): number =>
      purgeEntries.run(now).changes +
      purgeIdentifiers.run(now).changes +
      access.purge(now) +
      reservations.purge(now),
  );
  const selectIdentifier = db.prepare<[string], IdentifierRow>(
    `SELECT * FROM ${table}_identifiers WHERE key = ?`,
  );
  const insertIdentifier = db.prepare<[string, string, string, number, number]>(
    `INSERT INTO ${table}_identifiers (key, fingerprint, entry, version, created_at, expires_at)
     VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT (key) DO NOTHING`,
  );
  const replaceIdentifier = db.prepare<[string, string, number, number, string, string, number]>(
    `UPDATE ${table}_identifiers SET fingerprint = ?, entry = ?, version = version + 1, created_at = ?,
       expires_at = ? WHERE key = ? AND entry = ? AND version = ?`,
  );
  const selectState = db.prepare<[string], { state: string }>(`SELECT state FROM ${table} WHERE id = ?`);
  // Run immediate: the write lock is held from the first read, so no other connection binds between.
  const bind = db.transaction(
    (binding: NewIdentifierBinding, replaces: ReplacedBinding | undefined): BindResult => {
      const { key, fingerprint, entry, createdAt, expiresAt } = binding;
      if (insertIdentifier.run(key, fingerprint, entry, createdAt, expiresAt).changes === 1)
        return { bound: true, binding: fromIdentifierRow(selectIdentifier.get(key)!) };
      // Taken over only from the binding the caller read (its entry and version), when the payment
      // it names charged nothing (absent or rejected) or is the one bound again.
      let replaced = false;
      if (replaces !== undefined) {
        const state = replaces.entry === entry ? undefined : selectState.get(replaces.entry)?.state;
        replaced =
          (state === undefined || state === 'rejected') &&
          replaceIdentifier.run(
            fingerprint,
            entry,
            createdAt,
            expiresAt,
            key,
            replaces.entry,
            replaces.version,
          ).changes === 1;
      }
      return { bound: replaced, binding: fromIdentifierRow(selectIdentifier.get(key)!) };
    },
  );
  const statements = new Map<string, Database.Statement>();
  const cached = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };

  // A write whose loss costs nothing (docs/ledger.md#durability) commits at NORMAL: in WAL mode
  // it is not synced, the next FULL commit syncs it with its own frames. Everything else stays at
  // FULL. Only on a database the store opened: a given one keeps its own pragmas.
  const normal = owned ? db.prepare('PRAGMA synchronous = NORMAL') : undefined;
  const full = owned ? db.prepare('PRAGMA synchronous = FULL') : undefined;
  const write = <T>(options: LedgerWriteOptions | undefined, run: () => T): T => {
    if (options?.durable !== false || normal === undefined) return run();
    normal.run();
    try {
      return run();
    } finally {
      full!.run();
    }
  };

  const claim = db.transaction((entry: LedgerEntry): ClaimResult => {
    assertLedgerInvariant(entry);
    const columns = toLedgerColumns(entry);
    const inserted = cached(
      `INSERT INTO ${table} (${columns.map(([c]) => c).join(', ')}) VALUES (${placeholders(columns.length)})
       ON CONFLICT (id) DO NOTHING`,
    ).run(...columns.map(([, v]) => v));
    const row = selectById.get(entry.id)!;
    return { acquired: inserted.changes === 1, entry: fromLedgerRow(row) };
  });

  const condition = (expect: LedgerExpectation): { sql: string; params: LedgerColumnValue[] } => {
    let sql = `id = ? AND state IN (${placeholders(expect.state.length)})`;
    const params: LedgerColumnValue[] = [...expect.state];
    if (expect.owner !== undefined) {
      sql += ' AND owner = ?';
      params.push(expect.owner);
    }
    return { sql, params };
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  if (resolved.purgeIntervalMs > 0) {
    timer = setInterval(() => {
      try {
        purge(Date.now());
      } catch {
        // A locked or closed database: the next round (or an explicit purgeExpired) tries again.
      }
    }, resolved.purgeIntervalMs);
    timer.unref();
  }

  return {
    async claim(entry, options) {
      assertOpen();
      return write(options, () => claim.immediate(entry));
    },

    async get(id: PaymentIdentity) {
      assertOpen();
      const row = selectById.get(id);
      return row ? fromLedgerRow(row) : undefined;
    },

    async update(
      id: PaymentIdentity,
      expect: LedgerExpectation,
      patch: LedgerPatch,
      options?: LedgerWriteOptions,
    ) {
      assertOpen();
      assertLedgerInvariant(patch);
      if (expect.state.length === 0) return undefined;
      const {
        id: _id,
        createdAt: _c,
        updatedAt: _u,
        ...fields
      } = patch as LedgerPatch & Partial<LedgerEntry>;
      const columns = toLedgerColumns(fields);
      columns.push(['updated_at', Date.now()]);
      const where = condition(expect);
      if (settlesWithStoredResponse(patch))
        where.sql += ` AND (response_status IS NULL OR response_status < ${LEDGER_ERROR_STATUS})`;
      const statement = cached(
        `UPDATE ${table} SET ${columns.map(([c]) => `${c} = ?`).join(', ')} WHERE ${where.sql} RETURNING *`,
      );
      const row = write(options, () => statement.get(...columns.map(([, v]) => v), id, ...where.params)) as
        | LedgerRow
        | undefined;
      return row ? fromLedgerRow(row) : undefined;
    },

    async remove(id: PaymentIdentity, expect: LedgerExpectation, options?: LedgerWriteOptions) {
      assertOpen();
      if (expect.state.length === 0) return false;
      const where = condition(expect);
      const statement = cached(`DELETE FROM ${table} WHERE ${where.sql}`);
      return write(options, () => statement.run(id, ...where.params).changes === 1);
    },

    async query(query: LedgerQuery) {
      assertOpen();
      const limit = query.limit ?? LEDGER_QUERY_DEFAULT_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 0) {
        throw new TollboothError('invalid_config', `limit must be a non-negative integer (got ${limit})`);
      }
      const clauses: string[] = [];
      const params: LedgerColumnValue[] = [];
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
      if (query.leaseUntilBefore !== undefined) {
        clauses.push('lease_until < ?');
        params.push(query.leaseUntilBefore);
      }
      const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
      const rows = cached(`SELECT * FROM ${table} ${where} ORDER BY created_at DESC, id DESC LIMIT ?`).all(
        ...params,
        limit,
      ) as LedgerRow[];
      return rows.map(fromLedgerRow);
    },

    async bindIdentifier(binding: NewIdentifierBinding, replaces?: ReplacedBinding) {
      assertOpen();
      return bind.immediate(binding, replaces);
    },

    async getIdentifier(key: string) {
      assertOpen();
      const row = selectIdentifier.get(key);
      return row ? fromIdentifierRow(row) : undefined;
    },

    grantAccess: access.grantAccess,
    useAccess: access.useAccess,
    returnAccess: access.returnAccess,
    claimNonce: access.claimNonce,
    queryAccess: access.queryAccess,
    ...reservations.methods,

    async purgeExpired(now: number) {
      assertOpen();
      return purge.immediate(now);
    },

    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      if (owned) db.close();
    },
  };
}
