// The PostgreSQL ledger store's balance reservations (docs/ledger.md#one-balance-one-side-effect).
import type { BalanceReservation, PaymentIdentity, ReservationStore } from '@tollbooth/core';
import { assertReservationAmount } from '@tollbooth/core/ledger';
import type pg from 'pg';

/** The reservation table beside the ledger table `table` in `schema`, created when missing. */
export function reservationMigration(schema: string, table: string): string {
  return `
    CREATE TABLE IF NOT EXISTS "${schema}"."${table}_reservations" (
      entry      text PRIMARY KEY,
      key        text NOT NULL,
      amount     numeric NOT NULL,
      expires_at bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${table}_reservations_key_idx"
      ON "${schema}"."${table}_reservations" (key, expires_at);
  `;
}

/** The reservation methods of the PostgreSQL store, and its purge of expired reservations. */
export function createPostgresReservations(
  pool: pg.Pool,
  schema: string,
  tableName: string,
  ready: () => Promise<void>,
): { methods: ReservationStore; purge(now: number): Promise<number> } {
  const reservations = `"${schema}"."${tableName}_reservations"`;
  const lockName = `tollbooth-reservation:${schema}.${tableName}:`;
  return {
    methods: {
      async reserveBalance(reservation: BalanceReservation, now: number) {
        assertReservationAmount(reservation);
        await ready();
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          // One balance at a time: the lock is taken before the sum's snapshot, so the sum sees
          // every reservation of the key committed by an instance that held the lock before.
          await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
            lockName + reservation.key,
          ]);
          const { rows } = await client.query<{ held: string }>(
            `SELECT (COALESCE(SUM(amount), 0) + $3::numeric)::text AS held FROM ${reservations}
             WHERE key = $1 AND expires_at > $2 AND entry <> $4`,
            [reservation.key, now, reservation.amount, reservation.entry],
          );
          await client.query(
            `INSERT INTO ${reservations} (entry, key, amount, expires_at) VALUES ($1, $2, $3::numeric, $4)
             ON CONFLICT (entry) DO UPDATE SET key = EXCLUDED.key, amount = EXCLUDED.amount,
               expires_at = EXCLUDED.expires_at`,
            [reservation.entry, reservation.key, reservation.amount, reservation.expiresAt],
          );
          await client.query('COMMIT');
          return { held: BigInt(rows[0]!.held).toString() };
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        } finally {
          client.release();
        }
      },
      async releaseReservation(key: string, entry: PaymentIdentity) {
        await ready();
        const result = await pool.query(`DELETE FROM ${reservations} WHERE key = $1 AND entry = $2`, [
          key,
          entry,
        ]);
        return (result.rowCount ?? 0) > 0;
      },
    },
    async purge(now: number) {
      const result = await pool.query(`DELETE FROM ${reservations} WHERE expires_at < $1`, [now]);
      return result.rowCount ?? 0;
    },
  };
}
