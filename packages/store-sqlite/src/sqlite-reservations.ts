// The SQLite ledger store's balance reservations (docs/ledger.md#one-balance-one-side-effect).
import type {
  BalanceReservation,
  PaymentIdentity,
  ReservationResult,
  ReservationStore,
} from '@tollbooth/core';
import { assertReservationAmount } from '@tollbooth/core/ledger';
import type Database from 'better-sqlite3';

/** The reservation table of the ledger table `table`, created when missing. */
export function reservationSchema(table: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${table}_reservations (
      entry      TEXT PRIMARY KEY NOT NULL,
      key        TEXT NOT NULL,
      amount     TEXT NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS ${table}_reservations_key_idx ON ${table}_reservations (key, expires_at);
  `;
}

/** The reservation methods of the SQLite store, and its purge of expired reservations. */
export function createSqliteReservations(
  db: Database.Database,
  table: string,
  assertOpen: () => void,
): { methods: ReservationStore; purge(now: number): number } {
  const reservations = `${table}_reservations`;
  const held = db.prepare<[string, number, string], { amount: string }>(
    `SELECT amount FROM ${reservations} WHERE key = ? AND expires_at > ? AND entry <> ?`,
  );
  const upsert = db.prepare<[string, string, string, number]>(
    `INSERT INTO ${reservations} (entry, key, amount, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (entry) DO UPDATE SET key = excluded.key, amount = excluded.amount,
       expires_at = excluded.expires_at`,
  );
  const remove = db.prepare<[string, string]>(`DELETE FROM ${reservations} WHERE key = ? AND entry = ?`);
  const purge = db.prepare<[number]>(`DELETE FROM ${reservations} WHERE expires_at < ?`);
  // The sum and the insert in one immediate transaction: under the database's write lock, so a
  // second connection's reservation on the key counts this one.
  const reserve = db.transaction((reservation: BalanceReservation, now: number): ReservationResult => {
    let sum = BigInt(reservation.amount);
    for (const row of held.all(reservation.key, now, reservation.entry)) sum += BigInt(row.amount);
    upsert.run(reservation.entry, reservation.key, reservation.amount, reservation.expiresAt);
    return { held: sum.toString() };
  });
  return {
    methods: {
      async reserveBalance(reservation: BalanceReservation, now: number) {
        assertOpen();
        assertReservationAmount(reservation);
        return reserve.immediate(reservation, now);
      },
      async releaseReservation(key: string, entry: PaymentIdentity) {
        assertOpen();
        return remove.run(key, entry).changes > 0;
      },
    },
    purge: (now) => purge.run(now).changes,
  };
}
