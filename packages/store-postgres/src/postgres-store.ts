import {
  type AccessStore,
  type BindResult,
  type ClaimResult,
  type GateLogger,
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
  type LedgerRow,
  settlesWithStoredResponse,
  toLedgerColumns,
} from '@tollbooth/core/ledger';
import pg from 'pg';
import { accessMigration, createPostgresAccess } from './postgres-access';
import { createPostgresReservations, reservationMigration } from './postgres-reservations';
import {
  addMissingColumns,
  COLUMNS,
  fromIdentifierRow,
  type IdentifierRow,
  KEPT_PAST_EXPIRY,
  migration,
  param,
} from './postgres-schema';

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
export interface PostgresLedgerStore
  extends Omit<LedgerStore, keyof AccessStore | keyof ReservationStore>,
    AccessStore,
    ReservationStore {
  /**
   * Creates the schema, table and indexes if they are missing. Idempotent and safe to run from
   * several instances at once (an advisory lock serialises it). Every other method runs it first,
   * once; a failed migration is retried on the next call.
   */
  migrate(): Promise<void>;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,50}$/;

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
        await client.query(
          migration(schema, tableName) +
            accessMigration(schema, tableName) +
            reservationMigration(schema, tableName),
        );
        await addMissingColumns(client, schema, tableName);
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
  const access = createPostgresAccess(pool, schema, tableName, ready);
  const reservations = createPostgresReservations(pool, schema, tableName, ready);
  const rows = async (sql: string, params: unknown[]): Promise<LedgerRow[]> =>
    (await pool.query<LedgerRow>(sql, params)).rows;

  // A write whose loss costs nothing (docs/ledger.md#durability) turns synchronous_commit off for
  // its own transaction, in the same statement: no extra round trip. Durable ones keep the
  // server's setting. A later durable commit flushes the write-ahead log up to itself, so the
  // relaxed writes before it are durable from then on.
  const relaxedFrom = (options?: LedgerWriteOptions): string =>
    options?.durable === false ? `(SELECT set_config('synchronous_commit', 'off', true)) AS relaxed` : '';

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
    const others = (await access.purge(now)) + (await reservations.purge(now));
    return (result.rowCount ?? 0) + (bindings.rowCount ?? 0) + others;
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

    async claim(entry: LedgerEntry, options?: LedgerWriteOptions): Promise<ClaimResult> {
      assertLedgerInvariant(entry);
      await ready();
      const columns = toLedgerColumns(entry);
      const relaxed = relaxedFrom(options);
      const placeholders = columns.map(([c], i) => param(c, i + 1)).join(', ');
      const insert = `INSERT INTO ${table} (${columns.map(([c]) => c).join(', ')})
        ${relaxed ? `SELECT ${placeholders} FROM ${relaxed}` : `VALUES (${placeholders})`}
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

    async update(
      id: PaymentIdentity,
      expect: LedgerExpectation,
      patch: LedgerPatch,
      options?: LedgerWriteOptions,
    ) {
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
      const relaxed = relaxedFrom(options);
      if (settlesWithStoredResponse(patch))
        where.sql += ` AND (response_status IS NULL OR response_status < ${LEDGER_ERROR_STATUS})`;
      const [row] = await rows(
        `UPDATE ${table} SET ${columns.map(([c], i) => `${c} = ${param(c, i + 1)}`).join(', ')}
         ${relaxed ? `FROM ${relaxed}` : ''} WHERE id = $${columns.length + 1} AND ${where.sql} RETURNING ${COLUMNS}`,
        [...columns.map(([, v]) => v), id, ...where.params],
      );
      return row ? fromLedgerRow(row) : undefined;
    },

    async remove(id: PaymentIdentity, expect: LedgerExpectation, options?: LedgerWriteOptions) {
      await ready();
      if (expect.state.length === 0) return false;
      const where = condition(expect, 2);
      const relaxed = relaxedFrom(options);
      const using = relaxed ? ` USING ${relaxed}` : '';
      const result = await pool.query(`DELETE FROM ${table}${using} WHERE id = $1 AND ${where.sql}`, [
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

    async bindIdentifier(binding: NewIdentifierBinding, replaces?: ReplacedBinding): Promise<BindResult> {
      await ready();
      // Inserts, or takes the key over from the binding the caller read ($6 at version $7) when the
      // payment it names charged nothing or is the one bound again. The WHERE is checked on the row
      // as the last writer left it, so of two callers that read one version only one replaces it.
      const upsert = `INSERT INTO ${identifiers} AS b (key, fingerprint, entry, version, created_at, expires_at)
        VALUES ($1, $2, $3, 1, $4, $5)
        ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, entry = EXCLUDED.entry,
          version = b.version + 1, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE b.entry = $6 AND b.version = $7::integer AND (b.entry = EXCLUDED.entry OR NOT EXISTS
          (SELECT 1 FROM ${table} AS e WHERE e.id = b.entry AND e.state <> 'rejected'))
        RETURNING *`;
      const values = [
        binding.key,
        binding.fingerprint,
        binding.entry,
        binding.createdAt,
        binding.expiresAt,
        replaces?.entry ?? null,
        replaces?.version ?? null,
      ];
      // The binding in the way can be purged between the upsert and the read: then upsert again.
      for (;;) {
        const [stored] = (await pool.query<IdentifierRow>(upsert, values)).rows;
        if (stored) return { bound: true, binding: fromIdentifierRow(stored) };
        const [existing] = (
          await pool.query<IdentifierRow>(`SELECT * FROM ${identifiers} WHERE key = $1`, [binding.key])
        ).rows;
        if (existing) return { bound: false, binding: fromIdentifierRow(existing) };
      }
    },

    async getIdentifier(key: string) {
      await ready();
      const [row] = (await pool.query<IdentifierRow>(`SELECT * FROM ${identifiers} WHERE key = $1`, [key]))
        .rows;
      return row ? fromIdentifierRow(row) : undefined;
    },

    grantAccess: access.grantAccess,
    useAccess: access.useAccess,
    returnAccess: access.returnAccess,
    claimNonce: access.claimNonce,
    queryAccess: access.queryAccess,
    ...reservations.methods,
    purgeExpired: purge,

    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      if (owned) await pool.end();
    },
  };
}
