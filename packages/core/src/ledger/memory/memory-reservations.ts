import { TollboothError } from '../../errors/index';
import type { PaymentIdentity } from '../../scheme';
import {
  type BalanceReservation,
  isReservationAmount,
  type ReservationResult,
  type ReservationStore,
} from '../reservation-types';

/** The memory store's balance reservations, with their purge. */
export interface MemoryReservationBook extends ReservationStore {
  purge(at: number): number;
  clear(): void;
}

/** Refuses an amount no store could hold (every store checks it the same way). */
export function assertReservationAmount(reservation: BalanceReservation): void {
  if (!isReservationAmount(reservation.amount))
    throw new TollboothError(
      'invalid_amount',
      `a reservation's amount is a decimal string of atomic units (got ${JSON.stringify(reservation.amount)})`,
    );
}

/**
 * Reservations in a map per key, for the memory ledger store. JavaScript runs each method to its
 * end before another starts, so the sum and the insert are one atomic step.
 */
export function createMemoryReservationBook(assertOpen: () => void): MemoryReservationBook {
  const byKey = new Map<string, Map<PaymentIdentity, BalanceReservation>>();
  return {
    async reserveBalance(reservation: BalanceReservation, now: number): Promise<ReservationResult> {
      assertOpen();
      assertReservationAmount(reservation);
      let held = byKey.get(reservation.key);
      if (!held) {
        held = new Map();
        byKey.set(reservation.key, held);
      }
      held.delete(reservation.entry);
      let sum = BigInt(reservation.amount);
      for (const [entry, other] of held) {
        if (other.expiresAt <= now) held.delete(entry);
        else sum += BigInt(other.amount);
      }
      held.set(reservation.entry, { ...reservation });
      return { held: sum.toString() };
    },
    async releaseReservation(key: string, entry: PaymentIdentity): Promise<boolean> {
      assertOpen();
      const held = byKey.get(key);
      const deleted = held?.delete(entry) ?? false;
      if (held?.size === 0) byKey.delete(key);
      return deleted;
    },
    purge(at: number): number {
      let purged = 0;
      for (const [key, held] of byKey) {
        for (const [entry, reservation] of held) {
          if (reservation.expiresAt < at) {
            held.delete(entry);
            purged++;
          }
        }
        if (held.size === 0) byKey.delete(key);
      }
      return purged;
    },
    clear(): void {
      byKey.clear();
    },
  };
}
