// The ledger store suite's balance reservations (docs/ledger.md#one-balance-one-side-effect): each
// reservation sees the ones recorded before it on its balance, atomically, on one instance and
// across two; released and expired ones no longer count; amounts are exact past 2^53.
import { randomBytes } from 'node:crypto';
import type { BalanceReservation, LedgerStore, ReservationStore } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import type { AccessSuiteContext } from './ledger-store-access-suite';
import { HOUR, newId } from './ledger-store-fixtures';

/** What the suite is given: the same as the access suite's. */
export type ReservationSuiteContext = AccessSuiteContext;

type ReservingStore = LedgerStore & ReservationStore;

/** A balance key of a fresh payer. */
const newKey = () =>
  `eip155:84532|0x036cbd53842c5426634e7929541ec2318f3dcf7e|0x${randomBytes(20).toString('hex')}`;

function reservation(key: string, amount: string, overrides: Partial<BalanceReservation> = {}) {
  return { key, entry: newId('reserved'), amount, expiresAt: Date.now() + HOUR, ...overrides };
}

/** Registers the balance reservation tests. */
export function describeBalanceReservations(context: ReservationSuiteContext): void {
  const open = async (namespace?: string) => (await context.openStore(namespace)) as ReservingStore;

  describe('balance reservations', () => {
    it('has both reservation methods', async () => {
      const store = await open();
      expect(typeof store.reserveBalance).toBe('function');
      expect(typeof store.releaseReservation).toBe('function');
    });

    it('holds on a key what was reserved before, its own amount included; keys do not mix', async () => {
      const store = await open();
      const [key, other] = [newKey(), newKey()];
      const now = Date.now();
      expect(await store.reserveBalance(reservation(key, '10000'), now)).toEqual({ held: '10000' });
      const second = reservation(key, '2500');
      expect(await store.reserveBalance(second, now)).toEqual({ held: '12500' });
      expect(await store.reserveBalance(reservation(other, '7'), now)).toEqual({ held: '7' });
      // The same entry again replaces its reservation, never counts it twice.
      expect(await store.reserveBalance({ ...second, amount: '3000' }, now)).toEqual({ held: '13000' });
      expect(await store.reserveBalance(reservation(key, '1'), now)).toEqual({ held: '13001' });
    });

    it('no longer counts a released reservation; releasing one that is gone answers false', async () => {
      const store = await open();
      const key = newKey();
      const first = reservation(key, '10000');
      await store.reserveBalance(first, Date.now());
      expect(await store.releaseReservation(key, first.entry)).toBe(true);
      expect(await store.releaseReservation(key, first.entry)).toBe(false);
      expect(await store.releaseReservation(newKey(), newId('none'))).toBe(false);
      expect(await store.reserveBalance(reservation(key, '10000'), Date.now())).toEqual({ held: '10000' });
    });

    it('no longer counts a reservation past its expiresAt, and a purge deletes it', async () => {
      const store = await open();
      const key = newKey();
      const now = Date.now();
      await store.reserveBalance(reservation(key, '500', { expiresAt: now + 1_000 }), now);
      await store.reserveBalance(reservation(key, '40', { expiresAt: now + HOUR }), now);
      expect(await store.reserveBalance(reservation(key, '3'), now + 1_000)).toEqual({ held: '43' });
      const stale = reservation(newKey(), '9', { expiresAt: now - 1 });
      await store.reserveBalance(stale, now - 2);
      await store.purgeExpired(now);
      expect(await store.releaseReservation(stale.key, stale.entry)).toBe(false);
    });

    it('adds amounts exactly past 2^53 (18-decimal tokens)', async () => {
      const store = await open();
      const key = newKey();
      const now = Date.now();
      await store.reserveBalance(reservation(key, '999999999999999999999999999999'), now);
      expect(await store.reserveBalance(reservation(key, '1'), now)).toEqual({
        held: '1000000000000000000000000000000',
      });
    });

    it('refuses an amount that is not a decimal string of atomic units', async () => {
      const store = await open();
      for (const amount of ['', '-5', '1.5', '1e6', ' 10', 'abc'])
        await expect(
          store.reserveBalance(reservation(newKey(), amount), Date.now()),
          amount,
        ).rejects.toMatchObject({ code: 'invalid_amount' });
    });

    it('lets twenty concurrent reservations on one balance each see all the ones before it', async () => {
      const store = await open();
      const key = newKey();
      const held = await Promise.all(
        Array.from({ length: 20 }, () => store.reserveBalance(reservation(key, '1'), Date.now())),
      );
      // Atomic: every reservation counted exactly the ones recorded before it, so no two saw the same sum.
      expect(held.map((h) => Number(h.held)).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    });

    const durableIt = context.durable ? it : undefined;
    durableIt?.('keeps reservations across closing and reopening', async () => {
      const namespace = context.newNamespace('reservedurable');
      const first = await open(namespace);
      const key = newKey();
      await first.reserveBalance(reservation(key, '10000'), Date.now());
      await context.closeStore(first);
      const reopened = await open(namespace);
      expect(await reopened.reserveBalance(reservation(key, '1'), Date.now())).toEqual({ held: '10001' });
    });

    const sharedIt = context.shared ? it : undefined;
    sharedIt?.('never lets two instances both reserve one balance unseen by the other', async () => {
      const namespace = context.newNamespace('reserveshared');
      const [one, two] = [await open(namespace), await open(namespace)];
      for (let round = 0; round < 5; round += 1) {
        const key = newKey();
        const held = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? one : two).reserveBalance(reservation(key, '10000'), Date.now()),
          ),
        );
        // One balance for one price: exactly one reservation found nothing held before it.
        expect(held.filter((h) => h.held === '10000')).toHaveLength(1);
        expect(held.map((h) => BigInt(h.held) / 10000n).sort((a, b) => Number(a - b))).toEqual(
          Array.from({ length: 12 }, (_, i) => BigInt(i + 1)),
        );
      }
    });
  });
}
