// The ledger store suite's payment-identifier bindings: first binder wins, replacement, expiry
// that follows the entry a binding names (docs/ledger.md#purging), durability, two instances.
import { randomBytes } from 'node:crypto';
import type { IdentifierBinding, LedgerStore } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import { ALL_BYTES, buildLedgerEntry, HOUR, newId, response } from './ledger-store-fixtures';

export interface BindingSuiteContext {
  /** A store on a namespace of its own, or on `namespace` to reach the same data again. */
  openStore: (namespace?: string) => Promise<LedgerStore>;
  /** Closes a store the suite opened (and stops tracking it). */
  closeStore: (store: LedgerStore) => Promise<void>;
  /** A namespace no store has used yet. */
  newNamespace: (label: string) => string;
  durable: boolean;
  shared: boolean;
}

/** Registers the payment-identifier binding tests. */
export function describeIdentifierBindings({
  openStore,
  closeStore,
  newNamespace,
  durable,
  shared,
}: BindingSuiteContext): void {
  describe('payment identifier bindings', () => {
    const binding = (overrides: Partial<IdentifierBinding> = {}): IdentifierBinding => {
      const now = Date.now();
      return {
        key: `0xpayer:pay_${randomBytes(12).toString('hex')}`,
        fingerprint: randomBytes(32).toString('hex'),
        entry: newId('bound'),
        createdAt: now,
        expiresAt: now + HOUR,
        ...overrides,
      };
    };

    it('binds a free key and keeps the first binding against a second one', async () => {
      const store = await openStore();
      const first = binding();
      expect(await store.getIdentifier(first.key)).toBeUndefined();
      expect(await store.bindIdentifier(first)).toEqual(first);
      const second = binding({ key: first.key });
      expect(await store.bindIdentifier(second)).toEqual(first);
      expect(await store.getIdentifier(first.key)).toEqual(first);
    });

    it('moves a binding only away from the entry it names as replaced', async () => {
      const store = await openStore();
      const first = binding();
      await store.bindIdentifier(first);
      const next = binding({ key: first.key });
      expect(await store.bindIdentifier(next, newId('other'))).toEqual(first);
      expect(await store.bindIdentifier(next, first.entry)).toEqual(next);
      expect(await store.getIdentifier(first.key)).toEqual(next);
    });

    it('lets exactly one of 20 concurrent binders of one key win', async () => {
      const store = await openStore();
      const key = binding().key;
      const tries = Array.from({ length: 20 }, () => binding({ key }));
      const results = await Promise.all(tries.map((b) => store.bindIdentifier(b)));
      const winner = results[0]!;
      expect(tries.some((b) => b.entry === winner.entry && b.fingerprint === winner.fingerprint)).toBe(true);
      for (const result of results) expect(result).toEqual(winner);
    });

    // Expired by the real clock: Redis deletes a binding itself at its expiresAt.
    it('purges bindings that expired before the given time, and only those', async () => {
      const store = await openStore();
      const now = Date.now();
      const old = binding({ expiresAt: now - 1_000 });
      const kept = binding({ expiresAt: now + HOUR });
      // Returned as stored even though it has expired already (Redis drops it at once).
      expect(await store.bindIdentifier(old)).toEqual(old);
      expect(await store.bindIdentifier(kept)).toEqual(kept);
      await store.purgeExpired(now);
      expect(await store.getIdentifier(old.key)).toBeUndefined();
      expect(await store.getIdentifier(kept.key)).toEqual(kept);
    });

    it('keeps a binding as long as the entry it names is kept, and purges it with its entry', async () => {
      // The payer of a settled entry without its answer may retry with a freshly signed payload
      // under the same identifier: the binding must still lead it to the entry it paid, or it
      // would be charged again. Both expired on the real clock (the Redis store's own test
      // covers a binding made before its entry was settled).
      const store = await openStore();
      const past = Date.now() - 1_000;
      const at = Date.now() + 10 * HOUR;
      const receipt = { success: true, transaction: '0xbound' };
      const boundFirst = buildLedgerEntry({ state: 'settling' });
      await store.claim(boundFirst);
      await store.update(
        boundFirst.id,
        { state: ['settling'] },
        { state: 'settled', receipt, expiresAt: past },
      );
      const first = binding({ entry: boundFirst.id, expiresAt: past });
      expect(await store.bindIdentifier(first)).toEqual(first);
      const settledFirst = buildLedgerEntry({ state: 'settled', receipt, expiresAt: past });
      await store.claim(settledFirst);
      const second = binding({ entry: settledFirst.id, expiresAt: past });
      expect(await store.bindIdentifier(second)).toEqual(second);
      const answered = buildLedgerEntry({ state: 'settled', receipt, response: response(ALL_BYTES) });
      const gone = binding({ entry: answered.id, expiresAt: past });
      await store.claim(answered);
      await store.bindIdentifier(gone);

      await store.purgeExpired(at);
      expect(await store.getIdentifier(first.key)).toEqual(first);
      expect(await store.getIdentifier(second.key)).toEqual(second);
      expect(await store.getIdentifier(gone.key)).toBeUndefined();

      // The answer stored: the binding expires with its entry.
      await store.update(
        boundFirst.id,
        { state: ['settled'] },
        { state: 'settled', response: response(ALL_BYTES) },
      );
      await store.purgeExpired(at);
      expect(await store.get(boundFirst.id)).toBeUndefined();
      expect(await store.getIdentifier(first.key)).toBeUndefined();
      expect(await store.getIdentifier(second.key)).toEqual(second);
    });

    if (durable) {
      it('keeps bindings across closing and reopening the store', async () => {
        const namespace = newNamespace('bindings');
        const first = await openStore(namespace);
        const stored = binding();
        await first.bindIdentifier(stored);
        await closeStore(first);
        const reopened = await openStore(namespace);
        expect(await reopened.getIdentifier(stored.key)).toEqual(stored);
      });
    }

    if (shared) {
      it('never lets two instances both bind one key', async () => {
        const namespace = newNamespace('bindings');
        const [one, two] = [await openStore(namespace), await openStore(namespace)];
        for (let round = 0; round < 10; round += 1) {
          const key = binding().key;
          const tries = Array.from({ length: 6 }, () => binding({ key }));
          const results = await Promise.all(tries.map((b, i) => (i % 2 === 0 ? one : two).bindIdentifier(b)));
          for (const result of results) expect(result).toEqual(results[0]);
          expect(await one.getIdentifier(key)).toEqual(results[0]);
          expect(await two.getIdentifier(key)).toEqual(results[0]);
        }
      });
    }
  });
}
