// The ledger store suite's payment-identifier bindings: first binder wins, replacement, expiry
// that follows the entry a binding names (docs/ledger.md#purging), durability, two instances.
import { randomBytes } from 'node:crypto';
import type { IdentifierBinding, LedgerStore, NewIdentifierBinding } from '@tollbooth/core';
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
    const binding = (overrides: Partial<NewIdentifierBinding> = {}): NewIdentifierBinding => {
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
    /** The binding as stored at a version. */
    const versioned = (b: NewIdentifierBinding, version: number): IdentifierBinding => ({ ...b, version });

    it('binds a free key at version 1 and keeps the first binding against a second one', async () => {
      const store = await openStore();
      const first = binding();
      expect(await store.getIdentifier(first.key)).toBeUndefined();
      expect(await store.bindIdentifier(first)).toEqual({ bound: true, binding: versioned(first, 1) });
      const second = binding({ key: first.key });
      expect(await store.bindIdentifier(second)).toEqual({ bound: false, binding: versioned(first, 1) });
      expect(await store.getIdentifier(first.key)).toEqual(versioned(first, 1));
    });

    it('replaces a binding only at the entry and version it names as replaced, one version up', async () => {
      const store = await openStore();
      const first = binding();
      await store.bindIdentifier(first);
      const next = binding({ key: first.key });
      const refused = { bound: false, binding: versioned(first, 1) };
      expect(await store.bindIdentifier(next, { entry: newId('other'), version: 1 })).toEqual(refused);
      expect(await store.bindIdentifier(next, { entry: first.entry, version: 2 })).toEqual(refused);
      expect(await store.bindIdentifier(next, { entry: first.entry, version: 1 })).toEqual({
        bound: true,
        binding: versioned(next, 2),
      });
      // A caller that read version 1 before this replacement cannot replace it again.
      const late = binding({ key: first.key, entry: first.entry });
      expect(await store.bindIdentifier(late, { entry: first.entry, version: 1 })).toEqual({
        bound: false,
        binding: versioned(next, 2),
      });
      expect(await store.getIdentifier(first.key)).toEqual(versioned(next, 2));
    });

    it('replaces a binding only while its entry charged nothing (absent or rejected) or is the one bound again', async () => {
      const store = await openStore();
      const held = buildLedgerEntry();
      await store.claim(held);
      const first = binding({ entry: held.id });
      await store.bindIdentifier(first);
      const next = binding({ key: first.key });
      const replaces = { entry: held.id, version: 1 };
      for (const state of ['claimed', 'verified', 'settling', 'settled', 'uncertain'] as const) {
        const from = (await store.get(held.id))!.state;
        await store.update(held.id, { state: [from] }, { state });
        expect(await store.bindIdentifier(next, replaces), state).toEqual({
          bound: false,
          binding: versioned(first, 1),
        });
      }
      await store.update(held.id, { state: ['uncertain'] }, { state: 'rejected' });
      expect(await store.bindIdentifier(next, replaces)).toEqual({
        bound: true,
        binding: versioned(next, 2),
      });

      // Its payment claimed again by the caller (in flight now): bound again to the same entry.
      const again = buildLedgerEntry({ id: next.entry });
      await store.claim(again);
      const rebound = binding({ key: first.key, entry: again.id });
      expect(await store.bindIdentifier(rebound, { entry: again.id, version: 2 })).toEqual({
        bound: true,
        binding: versioned(rebound, 3),
      });
      // Released (removed): another payment may take it, from the version it read.
      await store.remove(again.id, { state: ['claimed'] });
      const other = binding({ key: first.key });
      expect(await store.bindIdentifier(other, { entry: again.id, version: 3 })).toEqual({
        bound: true,
        binding: versioned(other, 4),
      });
    });

    it('lets exactly one of 20 concurrent binders of one key win', async () => {
      const store = await openStore();
      const key = binding().key;
      const tries = Array.from({ length: 20 }, () => binding({ key }));
      const results = await Promise.all(tries.map((b) => store.bindIdentifier(b)));
      expect(results.filter((r) => r.bound)).toHaveLength(1);
      const winner = results.find((r) => r.bound)!.binding;
      expect(tries.some((b) => b.entry === winner.entry && b.fingerprint === winner.fingerprint)).toBe(true);
      for (const result of results) expect(result.binding).toEqual(winner);
    });

    it('lets exactly one of 20 concurrent replacers of one released binding win, the same payment again or a new one', async () => {
      // What the gate does when a released identifier is retried with its own payload (bound to
      // the same entry again) and with freshly signed ones, all having read the entry absent.
      const store = await openStore();
      const first = binding();
      await store.bindIdentifier(first);
      const replaces = { entry: first.entry, version: 1 };
      const tries = Array.from({ length: 20 }, (_, i) =>
        binding({ key: first.key, entry: i % 4 === 0 ? first.entry : newId('fresh') }),
      );
      const results = await Promise.all(tries.map((b) => store.bindIdentifier(b, replaces)));
      expect(results.filter((r) => r.bound)).toHaveLength(1);
      const winner = results.find((r) => r.bound)!.binding;
      expect(winner.version).toBe(2);
      for (const result of results) expect(result.binding).toEqual(winner);
      expect(await store.getIdentifier(first.key)).toEqual(winner);
    });

    // Expired by the real clock: Redis deletes a binding itself at its expiresAt.
    it('purges bindings that expired before the given time, and only those', async () => {
      const store = await openStore();
      const now = Date.now();
      const old = binding({ expiresAt: now - 1_000 });
      const kept = binding({ expiresAt: now + HOUR });
      // Returned as stored even though it has expired already (Redis drops it at once).
      expect(await store.bindIdentifier(old)).toEqual({ bound: true, binding: versioned(old, 1) });
      expect(await store.bindIdentifier(kept)).toEqual({ bound: true, binding: versioned(kept, 1) });
      await store.purgeExpired(now);
      expect(await store.getIdentifier(old.key)).toBeUndefined();
      expect(await store.getIdentifier(kept.key)).toEqual(versioned(kept, 1));
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
      expect(await store.bindIdentifier(first)).toEqual({ bound: true, binding: versioned(first, 1) });
      const settledFirst = buildLedgerEntry({ state: 'settled', receipt, expiresAt: past });
      await store.claim(settledFirst);
      const second = binding({ entry: settledFirst.id, expiresAt: past });
      expect(await store.bindIdentifier(second)).toEqual({ bound: true, binding: versioned(second, 1) });
      const answered = buildLedgerEntry({ state: 'settled', receipt, response: response(ALL_BYTES) });
      const gone = binding({ entry: answered.id, expiresAt: past });
      await store.claim(answered);
      await store.bindIdentifier(gone);

      await store.purgeExpired(at);
      expect(await store.getIdentifier(first.key)).toEqual(versioned(first, 1));
      expect(await store.getIdentifier(second.key)).toEqual(versioned(second, 1));
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
      expect(await store.getIdentifier(second.key)).toEqual(versioned(second, 1));
    });

    if (durable) {
      it('keeps bindings across closing and reopening the store', async () => {
        const namespace = newNamespace('bindings');
        const first = await openStore(namespace);
        const stored = binding();
        await first.bindIdentifier(stored);
        await closeStore(first);
        const reopened = await openStore(namespace);
        expect(await reopened.getIdentifier(stored.key)).toEqual(versioned(stored, 1));
      });
    }

    if (shared) {
      it('never lets two instances both bind one key, nor both replace one released binding', async () => {
        const namespace = newNamespace('bindings');
        const [one, two] = [await openStore(namespace), await openStore(namespace)];
        const on = (i: number) => (i % 2 === 0 ? one : two);
        for (let round = 0; round < 10; round += 1) {
          const key = binding().key;
          const tries = Array.from({ length: 6 }, () => binding({ key }));
          const results = await Promise.all(tries.map((b, i) => on(i).bindIdentifier(b)));
          expect(results.filter((r) => r.bound)).toHaveLength(1);
          for (const result of results) expect(result.binding).toEqual(results[0]!.binding);
          expect(await one.getIdentifier(key)).toEqual(results[0]!.binding);
          expect(await two.getIdentifier(key)).toEqual(results[0]!.binding);

          // Its entry released (never claimed here): the same payment bound again and fresh
          // ones, on both instances at once, all from the version read; one wins.
          const read = (await one.getIdentifier(key))!;
          const replacers = Array.from({ length: 6 }, (_, i) =>
            binding({ key, entry: i === 0 ? read.entry : newId('fresh') }),
          );
          const replaced = await Promise.all(
            replacers.map((b, i) => on(i).bindIdentifier(b, { entry: read.entry, version: read.version })),
          );
          expect(replaced.filter((r) => r.bound)).toHaveLength(1);
          const winner = replaced.find((r) => r.bound)!.binding;
          expect(winner.version).toBe(2);
          expect(await two.getIdentifier(key)).toEqual(winner);
        }
      });
    }
  });
}
