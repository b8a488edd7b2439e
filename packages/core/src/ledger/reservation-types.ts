import type { PaymentIdentity } from '../scheme';

/**
 * A payer's balance held for a verified payment whose handler runs before it settles
 * (`reserveBalance` routes, docs/ledger.md#one-balance-one-side-effect). The gate records it in the
 * ledger store before the handler runs and asks the chain for the payer's balance after: the
 * reservations recorded before it, with it, must fit in that balance. Two instances sharing a
 * store therefore never run two handlers on one balance that pays for one.
 */
export interface BalanceReservation {
  /** `<network>|<asset>|<payer>`, lower-cased: whose balance, of what, where. */
  key: string;
  /** The ledger entry of the payment the amount is held for: one reservation per payment. */
  entry: PaymentIdentity;
  /** Atomic units of the asset, a decimal string of digits. */
  amount: string;
  /**
   * Epoch ms after which the reservation no longer counts and may be purged: past the
   * authorization's end, no transfer of it can land any more.
   */
  expiresAt: number;
}

/** What `reserveBalance` recorded: the amount held on the key, this reservation included. */
export interface ReservationResult {
  /** Sum (a decimal string of atomic units) of the key's unexpired reservations, this one included. */
  held: string;
}

/**
 * The reservation part of a ledger store. Every method is atomic across instances sharing the
 * store. The built-in stores (memory, SQLite, Redis, PostgreSQL) implement it and pass the shared
 * store suite; a gate with a `reserveBalance` route needs a store that does.
 */
export interface ReservationStore {
  /**
   * Records a reservation (replacing one of the same entry) and answers the amount held on its key
   * at that moment: the amounts of the key's reservations recorded before it that have not expired
   * at `now` (epoch ms) nor been released, plus its own. Two callers never both see less than they
   * together hold: the one recorded second counts the first.
   */
  reserveBalance(reservation: BalanceReservation, now: number): Promise<ReservationResult>;
  /** Deletes the reservation of an entry (settled, released, refused); `false` when there was none. */
  releaseReservation(key: string, entry: PaymentIdentity): Promise<boolean>;
}

/** Whether a string is an amount a reservation can hold: digits only, no sign, at most 78 of them. */
export function isReservationAmount(amount: string): boolean {
  return /^\d{1,78}$/.test(amount);
}

/** The reservation key of a payer's balance of an asset on a network. */
export function reservationKey(network: string, asset: string, payer: string): string {
  return `${network}|${asset}|${payer}`.toLowerCase();
}
