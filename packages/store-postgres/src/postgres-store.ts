import {
  assertLedgerInvariant,
  type ClaimResult,
  fromLedgerRow,
  type GateLogger,
  type IdentifierBinding,
  LEDGER_ERROR_STATUS,
  LEDGER_JSON_COLUMNS,
  LEDGER_QUERY_DEFAULT_LIMIT,
  type LedgerColumn,
  type LedgerEntry,
  type LedgerExpectation,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerRow,
  type LedgerStore,
  type PaymentIdentity,
  settlesWithStoredResponse,
  TollboothError,
  toLedgerColumns,
} from '@tollbooth/core';
import pg from 'pg';

/** Options of {@link createPostgresLedgerStore}: give exactly one of `pool` and `connectionString`. */
export interface PostgresLedgerStoreOptions {
  /** A `pg` pool to use; the store never ends it. */
  pool?: pg.Pool;
  /** Connection string for a pool the store creates (and ends on `close`). */
  connectionString?: string;
  /** Schema of the ledger table; created if missing. */
  schema?: string;
  /** Name of the ledger table; created with its indexes if missing. */
  tableName?: string;
  /** How often expired entries are purged automatically, in ms; `0` turns it off. The timer is unref'd. */
  purgeIntervalMs?: number;
  /**
   * Where the store reports what no caller sees: errors of idle connections in a pool it created
   * and failed background purges. pino-compatible. Default: nowhere; the store never writes to
   * the console.
   */
  logger?: Pick<GateLogger, 'warn'>;
}

/** Defaults of {@link PostgresLedgerStoreOptions}. */
export const POSTGRES_LEDGER_STORE_DEFAULTS: Readonly<{
  schema: string;
  tableName: string;
  purgeIntervalMs: number;
}> = Object.freeze({
  schema: 'public',
  tableName: 'tollbooth_ledger',
  purgeIntervalMs: 60_000,
});

/** A {@link LedgerStore} on PostgreSQL, with its schema migration exposed. */
export interface PostgresLedgerStore extends LedgerStore {
  /**
   * Creates the schema, table and indexes if they are missing. Idempotent and safe to run from
   * several instances at once (an advisory lock serialises it). Every other method runs it first,
   * once; a failed migration is retried on the next call.
   */
  migrate(): Promise<void>;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,50}$/;

// JSON columns are read back as text: `pg` would turn both SQL NULL and a JSON `null` into `null`.
const COLUMNS = `id, state, resource, route, network, payer, payload::text AS payload,
  requirements::text AS requirements, valid_before, transaction_hash, receipt::text AS receipt,
  response_status, response_headers::text AS response_headers, response_body, error::text AS error,
  resolution::text AS resolution, owner, lease_until, created_at, updated_at, expires_at`;

/**
 * Entries no purge deletes, whatever their `expires_at` (docs/ledger.md#purging): a settled one
 * without its answer, and one whose charge the reconciler has yet to resolve.
 */
const KEPT_PAST_EXPIRY =
  "(state IN ('settling', 'uncertain') OR (state = 'settled' AND response_status IS NULL))";

/** `$n`, cast to jsonb for JSON columns (the value is always sent as JSON text). */
const param = (column: string, n: number) =>
  LEDGER_JSON_COLUMNS.has(column as LedgerColumn) ? `$${n}::jsonb` : `$${n}`;

function resolveOptions(options: PostgresLedgerStoreOptions) {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved = { ...POSTGRES_LEDGER_STORE_DEFAULTS, ...given } as typeof POSTGRES_LEDGER_STORE_DEFAULTS &
    PostgresLedgerStoreOptions;
  const problems: string[] = [];
  if ((resolved.pool === undefined) === (resolved.connectionString === undefined)) {
    problems.push('give exactly one of pool and connectionString');
  }
  if (resolved.connectionString !== undefined && typeof resolved.connectionString !== 'string') {
    problems.push('connectionString must be a string');
  }
  for (const key of ['schema', 'tableName'] as const) {
    if (typeof resolved[key] !== 'string' || !IDENTIFIER.test(resolved[key])) {
      problems.push(`${key} must match ${IDENTIFIER} (got ${String(resolved[key])})`);
    }
  }
  if (!Number.isSafeInteger(resolved.purgeIntervalMs) || resolved.purgeIntervalMs < 0) {
    problems.push(`purgeIntervalMs must be a non-negative integer (got ${String(resolved.purgeIntervalMs)})`);
  }
  if (resolved.logger !== undefined && typeof resolved.logger?.warn !== 'function') {
    problems.push('logger must have a warn(fields, message) method (pino-compatible)');
  }
  if (problems.length > 0) {
    throw new TollboothError(
      'invalid_config',
      `Invalid Postgres ledger store options: ${problems.join('; ')}`,
    );
  }
  return resolved;
}

function migration(schema: string, table: string): string {
  const t = `"${schema}"."${table}"`;
  return `
    CREATE SCHEMA IF NOT EXISTS "${schema}";
    CREATE TABLE IF NOT EXISTS ${t} (
      id               text PRIMARY KEY,
      state            text NOT NULL,
      resource         text NOT NULL,
      route            text NOT NULL,
      network          text NOT NULL,
      payer            text,
      payload          jsonb,
      requirements     jsonb,
      valid_before     bigint NOT NULL,
      transaction_hash text,
      receipt          jsonb,
      response_status  integer,
      response_headers jsonb,
      response_body    bytea,
      error            jsonb,
      resolution       jsonb,
      owner            text NOT NULL,
      lease_until      bigint NOT NULL,
      created_at       bigint NOT NULL,
      updated_at       bigint NOT NULL,
      expires_at       bigint NOT NULL
    );
    ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS resolution jsonb;
    CREATE INDEX IF NOT EXISTS "${table}_state_idx" ON ${t} (state, created_at);
    CREATE INDEX IF NOT EXISTS "${table}_transaction_idx" ON ${t} (transaction_hash) WHERE transaction_hash IS NOT NULL;
    CREATE INDEX IF NOT EXISTS "${table}_payer_idx" ON ${t} (payer, created_at) WHERE payer IS NOT NULL;
    CREATE INDEX IF NOT EXISTS "${table}_created_idx" ON ${t} (created_at);
    CREATE INDEX IF NOT EXISTS "${table}_expires_idx" ON ${t} (expires_at);
    CREATE TABLE IF NOT EXISTS "${schema}"."${table}_identifiers" (
      key         text PRIMARY KEY,
      fingerprint text NOT NULL,
      entry       text NOT NULL,
      created_at  bigint NOT NULL,
      expires_at  bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${table}_ids_expires_idx" ON "${schema}"."${table}_identifiers" (expires_at);
  `;
}

interface IdentifierRow {
  key: string;
  fingerprint: string;
  entry: string;
  created_at: string | number;
  expires_at: string | number;
}

function fromIdentifierRow(row: IdentifierRow): IdentifierBinding {
  return {
    key: row.key,
    fingerprint: row.fingerprint,
    entry: row.entry,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

/**
 * Creates a {@link LedgerStore} in PostgreSQL (`pg`), for several instances behind a load
 * balancer. A claim is `INSERT … ON CONFLICT (id) DO NOTHING RETURNING`; updates and removes are
 * compare-and-set `WHERE state = ANY($n) [AND owner = $m]`, which Postgres re-checks after any
 * concurrent write to the row, so two instances can never both win. Bodies are `bytea`, JSON
 * fields `jsonb`, times `bigint` epoch ms. The table is created on first use ({@link
 * PostgresLedgerStore.migrate}).
 *
 * @param options - `pool` or `connectionString`; `schema` (default `public`), `tableName`
 *   (default `tollbooth_ledger`), `purgeIntervalMs` (default 60 000, 0 = off).
 * @throws {TollboothError} `invalid_config`, listing every problem.
 * @example
 * ```ts
 * import { createPostgresLedgerStore } from '@tollbooth/store-postgres';
 *
 * const ledger = createPostgresLedgerStore({ connectionString: process.env.DATABASE_URL });
 * await ledger.migrate(); // optional: fail fast at start-up instead of on the first payment
 * // … pass `ledger` to the gate; on shutdown:
 * await ledger.close();
 * ```
 */
export function createPostgresLedgerStore(options: PostgresLedgerStoreOptions): PostgresLedgerStore {
  const resolved = resolveOptions(options);
  const owned = resolved.pool === undefined;
  const pool = resolved.pool ?? new pg.Pool({ connectionString: resolved.connectionString });
  const logger = resolved.logger;
  if (owned) {
    // An idle client that dies is dropped by the pool; the next query reports the problem.
    pool.on('error', (error) =>
      logger?.warn({ err: error, code: 'ledger_unavailable' }, 'Postgres ledger connection lost'),
    );
  }
  const { schema, tableName } = resolved;
  const table = `"${schema}"."${tableName}"`;
  const identifiers = `"${schema}"."${tableName}_identifiers"`;

  let closed = false;
  let migrated: Promise<void> | undefined;
  const migrate = (): Promise<void> => {
    migrated ??= (async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // Concurrent CREATE … IF NOT EXISTS can still collide in the catalog: serialise instances.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tollbooth-ledger:${table}`]);
        await client.query(migration(schema, tableName));
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      migrated = undefined;
      throw error;
    });
    return migrated;
  };
  const ready = async (): Promise<void> => {
    if (closed) throw new TollboothError('ledger_unavailable', 'The Postgres ledger store is closed');
    await migrate();
  };
  const rows = async (sql: string, params: unknown[]): Promise<LedgerRow[]> =>
    (await pool.query<LedgerRow>(sql, params)).rows;

  const condition = (expect: LedgerExpectation, first: number) => {
    let sql = `state = ANY($${first}::text[])`;
    const params: unknown[] = [[...expect.state]];
    if (expect.owner !== undefined) {
      sql += ` AND owner = $${first + 1}`;
      params.push(expect.owner);
    }
    return { sql, params };
  };

  const purge = async (now: number): Promise<number> => {
    await ready();
    // A settled entry without its answer is kept (its payer is served whenever it retries), and so
    // is an unresolved charge and a binding naming either (docs/ledger.md#purging).
    const result = await pool.query(
      `DELETE FROM ${table} WHERE expires_at < $1 AND NOT ${KEPT_PAST_EXPIRY}`,
      [now],
    );
    const bindings = await pool.query(
      `DELETE FROM ${identifiers} AS b WHERE b.expires_at < $1 AND NOT EXISTS
         (SELECT 1 FROM ${table} AS e WHERE e.id = b.entry AND ${KEPT_PAST_EXPIRY})`,
      [now],
    );
    return (result.rowCount ?? 0) + (bindings.rowCount ?? 0);
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  if (resolved.purgeIntervalMs > 0) {
    timer = setInterval(() => {
      // A failed round is harmless: the next one (or an explicit purgeExpired) tries again.
      purge(Date.now()).catch((error: unknown) =>
        logger?.warn({ err: error, code: 'ledger_unavailable' }, 'ledger purge round failed'),
      );
    }, resolved.purgeIntervalMs);
    timer.unref();
  }

  return {
    migrate,

    async claim(entry: LedgerEntry): Promise<ClaimResult> {
      assertLedgerInvariant(entry);
      await ready();
      const columns = toLedgerColumns(entry);
      const insert = `INSERT INTO ${table} (${columns.map(([c]) => c).join(', ')})
        VALUES (${columns.map(([c], i) => param(c, i + 1)).join(', ')})
        ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`;
      const values = columns.map(([, v]) => v);
      // The existing entry can be removed between the insert and the read: then insert again.
      for (;;) {
        const [inserted] = await rows(insert, values);
        if (inserted) return { acquired: true, entry: fromLedgerRow(inserted) };
        const [existing] = await rows(`SELECT ${COLUMNS} FROM ${table} WHERE id = $1`, [entry.id]);
        if (existing) return { acquired: false, entry: fromLedgerRow(existing) };
      }
    },

    async get(id: PaymentIdentity) {
      await ready();
      const [row] = await rows(`SELECT ${COLUMNS} FROM ${table} WHERE id = $1`, [id]);
      return row ? fromLedgerRow(row) : undefined;
    },

    async update(id: PaymentIdentity, expect: LedgerExpectation, patch: LedgerPatch) {
      assertLedgerInvariant(patch);
      await ready();
      if (expect.state.length === 0) return undefined;
      const {
        id: _id,
        createdAt: _c,
        updatedAt: _u,
        ...fields
      } = patch as LedgerPatch & Partial<LedgerEntry>;
      const columns = toLedgerColumns(fields);
      columns.push(['updated_at', Date.now()]);
      const where = condition(expect, columns.length + 2);
      if (settlesWithStoredResponse(patch))
        where.sql += ` AND (response_status IS NULL OR response_status < ${LEDGER_ERROR_STATUS})`;
      const [row] = await rows(
        `UPDATE ${table} SET ${columns.map(([c], i) => `${c} = ${param(c, i + 1)}`).join(', ')}
         WHERE id = $${columns.length + 1} AND ${where.sql} RETURNING ${COLUMNS}`,
        [...columns.map(([, v]) => v), id, ...where.params],
      );
      return row ? fromLedgerRow(row) : undefined;
    },

    async remove(id: PaymentIdentity, expect: LedgerExpectation) {
      await ready();
      if (expect.state.length === 0) return false;
      const where = condition(expect, 2);
      const result = await pool.query(`DELETE FROM ${table} WHERE id = $1 AND ${where.sql}`, [
        id,
        ...where.params,
      ]);
      return result.rowCount === 1;
    },

    async query(query: LedgerQuery) {
      const limit = query.limit ?? LEDGER_QUERY_DEFAULT_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 0) {
        throw new TollboothError('invalid_config', `limit must be a non-negative integer (got ${limit})`);
      }
      await ready();
      const clauses: string[] = [];
      const params: unknown[] = [];
      const add = (clause: (n: number) => string, value: unknown) => {
        params.push(value);
        clauses.push(clause(params.length));
      };
      if (query.id !== undefined) add((n) => `id = $${n}`, query.id);
      if (query.state !== undefined) {
        const states = typeof query.state === 'string' ? [query.state] : [...query.state];
        if (states.length === 0) return [];
        add((n) => `state = ANY($${n}::text[])`, states);
      }
      if (query.transaction !== undefined) add((n) => `transaction_hash = $${n}`, query.transaction);
      if (query.payer !== undefined) add((n) => `payer = $${n}`, query.payer);
      if (query.leaseUntilBefore !== undefined) add((n) => `lease_until < $${n}`, query.leaseUntilBefore);
      const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
      params.push(limit);
      const found = await rows(
        `SELECT ${COLUMNS} FROM ${table} ${where}
         ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $${params.length}`,
        params,
      );
      return found.map(fromLedgerRow);
    },

    async bindIdentifier(binding: IdentifierBinding, replaces?: PaymentIdentity) {
      await ready();
      // Inserts, or takes the key over from the entry it replaces; the WHERE keeps any other binding.
      const upsert = `INSERT INTO ${identifiers} (key, fingerprint, entry, created_at, expires_at)
        VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, entry = EXCLUDED.entry,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE ${identifiers}.entry = $6
        RETURNING *`;
      const values = [
        binding.key,
        binding.fingerprint,
        binding.entry,
        binding.createdAt,
        binding.expiresAt,
        replaces ?? null,
      ];
      // The binding in the way can be purged between the upsert and the read: then upsert again.
      for (;;) {
        const [stored] = (await pool.query<IdentifierRow>(upsert, values)).rows;
        if (stored) return fromIdentifierRow(stored);
        const [existing] = (
          await pool.query<IdentifierRow>(`SELECT * FROM ${identifiers} WHERE key = $1`, [binding.key])
        ).rows;
        if (existing) return fromIdentifierRow(existing);
      }
    },

    async getIdentifier(key: string) {
      await ready();
      const [row] = (await pool.query<IdentifierRow>(`SELECT * FROM ${identifiers} WHERE key = $1`, [key]))
        .rows;
      return row ? fromIdentifierRow(row) : undefined;
    },

    purgeExpired: purge,

    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      if (owned) await pool.end();
    },
  };
}
