// The PostgreSQL ledger store's sign-in part: access grants and nonce claims (docs/sign-in-with-x.md).
import type { AccessGrant, AccessQuery, AccessStore, AccessUse, PaymentIdentity } from '@tollbooth/core';
import {
  ACCESS_COLUMNS,
  type AccessRow,
  accessQueryLimit,
  fromAccessRow,
  toAccessValues,
} from '@tollbooth/core/ledger';
import type pg from 'pg';

/** The grant and nonce tables beside the ledger table `table` in `schema`, created when missing. */
export function accessMigration(schema: string, table: string): string {
  const access = `"${schema}"."${table}_access"`;
  return `
    CREATE TABLE IF NOT EXISTS ${access} (
      payment          text PRIMARY KEY,
      route            text NOT NULL,
      network          text NOT NULL,
      payer            text NOT NULL,
      amount           text NOT NULL,
      asset            text NOT NULL,
      transaction_hash text,
      granted_at       bigint NOT NULL,
      valid_until      bigint,
      uses             integer,
      used             integer NOT NULL DEFAULT 0,
      last_used_at     bigint,
      expires_at       bigint
    );
    CREATE INDEX IF NOT EXISTS "${table}_access_subject_idx" ON ${access} (route, network, payer);
    CREATE INDEX IF NOT EXISTS "${table}_access_granted_idx" ON ${access} (granted_at);
    CREATE INDEX IF NOT EXISTS "${table}_access_expires_idx" ON ${access} (expires_at)
      WHERE expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS "${schema}"."${table}_nonces" (
      nonce      text PRIMARY KEY,
      expires_at bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${table}_nonces_expires_idx" ON "${schema}"."${table}_nonces" (expires_at);
  `;
}

/** A grant that lets a request in at `$4`: before its pass ends, with a use left. */
const HOLDS = '(valid_until IS NULL OR valid_until > $4) AND (uses IS NULL OR used < uses)';
/** `grantUseOrder` in SQL: the pass ending soonest, counted uses, the oldest, the payment id. */
const USE_ORDER = 'valid_until ASC NULLS LAST, uses IS NULL, granted_at, payment COLLATE "C"';
/** How many times a use lost to concurrent ones is tried again (each loss is another request's use). */
const USE_ATTEMPTS = 64;

/** The sign-in methods of the PostgreSQL store, and its purge of grants and nonce claims. */
export function createPostgresAccess(
  pool: pg.Pool,
  schema: string,
  table: string,
  ready: () => Promise<void>,
): AccessStore & { purge(now: number): Promise<number> } {
  const access = `"${schema}"."${table}_access"`;
  const nonces = `"${schema}"."${table}_nonces"`;
  const subject = 'route = $1 AND network = $2 AND payer = $3';
  // The subquery picks a grant from the statement's snapshot; the outer WHERE is checked again on
  // the row as a concurrent use left it, so two instances never take the same last use.
  const use = `UPDATE ${access} SET used = used + 1, last_used_at = $4,
      expires_at = CASE WHEN uses IS NOT NULL AND used + 1 >= uses AND expires_at IS NULL
                        THEN $5 ELSE expires_at END
    WHERE payment = (SELECT payment FROM ${access} WHERE ${subject} AND ${HOLDS}
                     ORDER BY ${USE_ORDER} LIMIT 1)
      AND ${HOLDS}
    RETURNING *`;
  const candidate = `SELECT 1 FROM ${access} WHERE ${subject} AND ${HOLDS} LIMIT 1`;

  return {
    async grantAccess(grant: AccessGrant): Promise<AccessGrant> {
      await ready();
      const insert = `INSERT INTO ${access} (${ACCESS_COLUMNS.join(', ')})
        VALUES (${ACCESS_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})
        ON CONFLICT (payment) DO NOTHING RETURNING *`;
      // The grant in the way can be purged between the insert and the read: then insert again.
      for (;;) {
        const [inserted] = (await pool.query<AccessRow>(insert, toAccessValues(grant))).rows;
        if (inserted) return fromAccessRow(inserted);
        const [existing] = (
          await pool.query<AccessRow>(`SELECT * FROM ${access} WHERE payment = $1`, [grant.payment])
        ).rows;
        if (existing) return fromAccessRow(existing);
      }
    },

    async useAccess(request: AccessUse): Promise<AccessGrant | undefined> {
      await ready();
      const values = [request.route, request.network, request.payer, request.at, request.keepUntil];
      for (let attempt = 0; attempt < USE_ATTEMPTS; attempt += 1) {
        const [row] = (await pool.query<AccessRow>(use, values)).rows;
        if (row) return fromAccessRow(row);
        // No row: no grant holds, or a concurrent use took the one picked; only the second retries.
        if ((await pool.query(candidate, values.slice(0, 4))).rowCount === 0) return undefined;
      }
      return undefined;
    },

    async returnAccess(payment: PaymentIdentity): Promise<boolean> {
      await ready();
      const result = await pool.query(
        `UPDATE ${access} SET used = used - 1,
           expires_at = CASE WHEN valid_until IS NULL THEN NULL ELSE expires_at END
         WHERE payment = $1 AND used > 0`,
        [payment],
      );
      return result.rowCount === 1;
    },

    async claimNonce(nonce: string, expiresAt: number): Promise<boolean> {
      await ready();
      // A claim whose time has passed no longer holds: it is taken over, purged or not. A second
      // concurrent insert waits for the first and then finds its claim live.
      const result = await pool.query(
        `INSERT INTO ${nonces} AS n (nonce, expires_at) VALUES ($1, $2)
         ON CONFLICT (nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE n.expires_at < $3`,
        [nonce, expiresAt, Date.now()],
      );
      return result.rowCount === 1;
    },

    async queryAccess(query: AccessQuery): Promise<AccessGrant[]> {
      const limit = accessQueryLimit(query);
      await ready();
      const clauses: string[] = [];
      const params: unknown[] = [];
      for (const [column, value] of [
        ['payment', query.payment],
        ['payer', query.payer],
        ['route', query.route],
      ] as const) {
        if (value === undefined) continue;
        params.push(value);
        clauses.push(`${column} = $${params.length}`);
      }
      const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
      params.push(limit);
      const { rows } = await pool.query<AccessRow>(
        `SELECT * FROM ${access} ${where} ORDER BY granted_at DESC, payment COLLATE "C" DESC LIMIT $${params.length}`,
        params,
      );
      return rows.map(fromAccessRow);
    },

    async purge(now: number): Promise<number> {
      const grants = await pool.query(`DELETE FROM ${access} WHERE expires_at < $1`, [now]);
      const claims = await pool.query(`DELETE FROM ${nonces} WHERE expires_at < $1`, [now]);
      return (grants.rowCount ?? 0) + (claims.rowCount ?? 0);
    },
  };
}
