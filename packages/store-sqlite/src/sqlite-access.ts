// The SQLite ledger store's sign-in part: access grants and nonce claims (docs/sign-in-with-x.md).
import type { AccessGrant, AccessQuery, AccessStore, AccessUse, PaymentIdentity } from '@tollbooth/core';
import {
  ACCESS_COLUMNS,
  type AccessRow,
  accessQueryLimit,
  fromAccessRow,
  toAccessValues,
} from '@tollbooth/core/ledger';
import type Database from 'better-sqlite3';

/** The grant and nonce tables of the ledger table `table`, created when missing. */
export function accessSchema(table: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${table}_access (
      payment          TEXT PRIMARY KEY NOT NULL,
      route            TEXT NOT NULL,
      network          TEXT NOT NULL,
      payer            TEXT NOT NULL,
      amount           TEXT NOT NULL,
      asset            TEXT NOT NULL,
      transaction_hash TEXT,
      granted_at       INTEGER NOT NULL,
      valid_until      INTEGER,
      uses             INTEGER,
      used             INTEGER NOT NULL DEFAULT 0,
      last_used_at     INTEGER,
      expires_at       INTEGER
    );
    CREATE INDEX IF NOT EXISTS ${table}_access_subject_idx ON ${table}_access (route, network, payer);
    CREATE INDEX IF NOT EXISTS ${table}_access_granted_idx ON ${table}_access (granted_at);
    CREATE INDEX IF NOT EXISTS ${table}_access_expires_idx ON ${table}_access (expires_at)
      WHERE expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS ${table}_nonces (
      nonce      TEXT PRIMARY KEY NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS ${table}_nonces_expires_idx ON ${table}_nonces (expires_at);
  `;
}

/** A grant that lets a request in at `?at`: before its pass ends, with a use left. */
const HOLDS = '(valid_until IS NULL OR valid_until > @at) AND (uses IS NULL OR used < uses)';
/** `grantUseOrder` in SQL: the pass ending soonest, counted uses, the oldest, the payment id. */
const USE_ORDER = 'valid_until IS NULL, valid_until, uses IS NULL, granted_at, payment';

/** The sign-in methods of the SQLite store, and its purge of grants and nonce claims. */
export function createSqliteAccess(
  db: Database.Database,
  table: string,
  assertOpen: () => void,
): AccessStore & { purge(now: number): number } {
  const access = `${table}_access`;
  const nonces = `${table}_nonces`;
  const insert = db.prepare(
    `INSERT INTO ${access} (${ACCESS_COLUMNS.join(', ')}) VALUES (${ACCESS_COLUMNS.map(() => '?').join(', ')})
     ON CONFLICT (payment) DO NOTHING`,
  );
  const select = db.prepare<[string], AccessRow>(`SELECT * FROM ${access} WHERE payment = ?`);
  // One statement: SQLite runs it under the database's write lock, so no other connection takes a
  // use between the choice of the grant and its update.
  const use = db.prepare<Record<string, string | number>, AccessRow>(
    `UPDATE ${access} SET used = used + 1, last_used_at = @at,
       expires_at = CASE WHEN uses IS NOT NULL AND used + 1 >= uses AND expires_at IS NULL
                         THEN @keepUntil ELSE expires_at END
     WHERE payment = (SELECT payment FROM ${access}
                      WHERE route = @route AND network = @network AND payer = @payer AND ${HOLDS}
                      ORDER BY ${USE_ORDER} LIMIT 1)
     RETURNING *`,
  );
  const giveBack = db.prepare<[string]>(
    `UPDATE ${access} SET used = used - 1,
       expires_at = CASE WHEN valid_until IS NULL THEN NULL ELSE expires_at END
     WHERE payment = ? AND used > 0`,
  );
  // A claim whose time has passed no longer holds: it is taken over, purged or not.
  const claim = db.prepare<[string, number, number]>(
    `INSERT INTO ${nonces} (nonce, expires_at) VALUES (?, ?)
     ON CONFLICT (nonce) DO UPDATE SET expires_at = excluded.expires_at WHERE ${nonces}.expires_at < ?`,
  );
  const purgeGrants = db.prepare<[number]>(`DELETE FROM ${access} WHERE expires_at < ?`);
  const purgeNonces = db.prepare<[number]>(`DELETE FROM ${nonces} WHERE expires_at < ?`);

  return {
    async grantAccess(grant: AccessGrant): Promise<AccessGrant> {
      assertOpen();
      insert.run(...toAccessValues(grant));
      return fromAccessRow(select.get(grant.payment)!);
    },

    async useAccess(request: AccessUse): Promise<AccessGrant | undefined> {
      assertOpen();
      const { route, network, payer, at, keepUntil } = request;
      const row = use.get({ route, network, payer, at, keepUntil });
      return row ? fromAccessRow(row) : undefined;
    },

    async returnAccess(payment: PaymentIdentity): Promise<boolean> {
      assertOpen();
      return giveBack.run(payment).changes === 1;
    },

    async claimNonce(nonce: string, expiresAt: number): Promise<boolean> {
      assertOpen();
      return claim.run(nonce, expiresAt, Date.now()).changes === 1;
    },

    async queryAccess(query: AccessQuery): Promise<AccessGrant[]> {
      assertOpen();
      const limit = accessQueryLimit(query);
      const clauses: string[] = [];
      const params: Array<string | number> = [];
      for (const [column, value] of [
        ['payment', query.payment],
        ['payer', query.payer],
        ['route', query.route],
      ] as const) {
        if (value === undefined) continue;
        clauses.push(`${column} = ?`);
        params.push(value);
      }
      const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
      const rows = db
        .prepare(`SELECT * FROM ${access} ${where} ORDER BY granted_at DESC, payment DESC LIMIT ?`)
        .all(...params, limit) as AccessRow[];
      return rows.map(fromAccessRow);
    },

    purge: (now: number): number => purgeGrants.run(now).changes + purgeNonces.run(now).changes,
  };
}
