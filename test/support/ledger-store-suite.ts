import type { LedgerStore } from '@tollbooth/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeAccessGrants } from './ledger-store-access-suite';
import { describeIdentifierBindings } from './ledger-store-binding-suite';
import { describeCompareAndSet } from './ledger-store-cas-suite';
import { ALL_BYTES, buildLedgerEntry, NOT_UTF8, newId, response } from './ledger-store-fixtures';
import { describePurgeRules } from './ledger-store-purge-suite';
import { describeQueries } from './ledger-store-query-suite';
import { describeBalanceReservations } from './ledger-store-reservation-suite';

/**
 * Opens a store on a namespace of the backend. Two calls with the same namespace must reach the
 * same data (another connection / another instance), two namespaces must never see each other's
 * entries: that is how the suite isolates tests and checks cross-instance atomicity.
 */
export type OpenLedgerStore = (namespace: string) => LedgerStore | Promise<LedgerStore>;

export interface LedgerStoreSuiteOptions {
  /** Entries survive closing the store and opening it again (SQLite file, Redis, Postgres). */
  durable: boolean;
  /** Two stores opened on one namespace share their data (two connections to one backend). */
  shared: boolean;
  /**
   * Why the backend cannot be reached (names the service and the env var), or `undefined` when it
   * can. The store's tests are skipped with this message — except under CI (`process.env.CI`),
   * where a missing service is a failure.
   */
  unavailable?: string | undefined;
  /** Drops everything the run created (tables, schemas, keys); called once after the suite. */
  cleanup?: () => Promise<void>;
}

/**
 * The one test suite every {@link LedgerStore} implementation must pass, run against the real
 * backend: atomic claim, compare-and-set update and remove, exact byte and JSON round trips,
 * queries, expiry, durability and atomicity across two instances.
 */
export function describeLedgerStore(
  name: string,
  open: OpenLedgerStore,
  options: LedgerStoreSuiteOptions,
): void {
  if (options.unavailable !== undefined) {
    if (process.env.CI) {
      describe(`${name} ledger store`, () => {
        it('has its backing service available (required under CI)', () => {
          throw new Error(`${options.unavailable} (CI is set, so this store's tests cannot be skipped)`);
        });
      });
    } else {
      console.warn(`[ledger store suite] skipping the ${name} store: ${options.unavailable}`);
      describe.skip(`${name} ledger store — skipped: ${options.unavailable}`, () => {
        it('is skipped', () => {});
      });
    }
    return;
  }

  describe(`${name} ledger store`, () => {
    const opened: LedgerStore[] = [];
    let namespaces = 0;
    const newNamespace = (label: string): string => `${label}${++namespaces}`;
    /** A store on a namespace of its own (or on `namespace`, to reach the same data again). */
    const openStore = async (namespace = newNamespace('ns')): Promise<LedgerStore> => {
      const store = await open(namespace);
      opened.push(store);
      return store;
    };
    const closeStore = async (store: LedgerStore): Promise<void> => {
      opened.splice(opened.indexOf(store), 1);
      await store.close();
    };

    // Every test closes what it opened, so connections never pile up across the suite.
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });
    afterAll(async () => {
      await options.cleanup?.();
    });

    it('inserts on the first claim and returns the existing entry to the second claimer', async () => {
      const store = await openStore();
      const first = buildLedgerEntry();
      const claimed = await store.claim(first);
      expect(claimed.acquired).toBe(true);
      expect(claimed.entry).toEqual(first);

      const second = {
        ...buildLedgerEntry({ id: first.id }),
        owner: 'instance-b:req-9',
        route: 'GET /other',
      };
      const again = await store.claim(second);
      expect(again.acquired).toBe(false);
      expect(again.entry).toEqual(first);
      expect(await store.get(first.id)).toEqual(first);
    });

    it('makes the writes that need not wait for the disk (durable: false) the same atomic claim and compare-and-set', async () => {
      const relaxed = { durable: false };
      const namespace = newNamespace('relaxed');
      const store = await openStore(namespace);
      const other = options.shared ? await openStore(namespace) : store;
      const entry = buildLedgerEntry();
      expect((await store.claim(entry, relaxed)).acquired).toBe(true);
      // Visible at once to another connection: only a crash can lose it.
      expect((await other.claim({ ...entry, owner: 'instance-b:req-2' }, relaxed)).acquired).toBe(false);
      expect(
        await other.update(
          entry.id,
          { state: ['claimed'], owner: 'instance-b:req-2' },
          { state: 'verified' },
          relaxed,
        ),
      ).toBeUndefined();
      const verified = await store.update(
        entry.id,
        { state: ['claimed'], owner: entry.owner },
        { state: 'verified' },
        relaxed,
      );
      expect(verified?.state).toBe('verified');
      expect((await other.get(entry.id))?.state).toBe('verified');
      // A durable write after relaxed ones on the same connection.
      const settling = await store.update(
        entry.id,
        { state: ['verified'], owner: entry.owner },
        { state: 'settling', response: response(ALL_BYTES) },
      );
      expect(settling?.state).toBe('settling');
      expect(
        await store.remove(entry.id, { state: ['claimed', 'verified'], owner: entry.owner }, relaxed),
      ).toBe(false);
      const second = buildLedgerEntry();
      await store.claim(second, relaxed);
      expect(await other.remove(second.id, { state: ['claimed'], owner: second.owner }, relaxed)).toBe(true);
      expect(await store.get(second.id)).toBeUndefined();
    });

    it('returns undefined for an unknown id', async () => {
      const store = await openStore();
      expect(await store.get(newId('missing'))).toBeUndefined();
    });

    it('lets exactly one of 50 concurrent claims of one id acquire it', async () => {
      const store = await openStore();
      const id = newId('race');
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.claim(buildLedgerEntry({ id, owner: `racer-${i}` }))),
      );
      const winners = results.filter((r) => r.acquired);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.entry.owner;
      expect(results.every((r) => r.entry.owner === winner)).toBe(true);
      expect((await store.get(id))?.owner).toBe(winner);
    });

    it('keeps absent optional fields absent', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry();
      delete entry.payer;
      await store.claim(entry);
      const got = await store.get(entry.id);
      expect(got).toEqual(entry);
      for (const field of ['payer', 'transaction', 'receipt', 'response', 'error', 'resolution'] as const) {
        expect(got?.[field], field).toBeUndefined();
        // Absent, not present as undefined: a spread or an `in` check tells the two apart.
        expect(Object.keys(got!), field).not.toContain(field);
      }
    });

    it('refuses every operation once closed, and closes again without error', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry();
      await store.claim(entry);
      await store.close();
      const binding = { key: 'k', fingerprint: 'f', entry: entry.id, createdAt: 1, expiresAt: 2 };
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['claim', () => store.claim(buildLedgerEntry())],
        ['get', () => store.get(entry.id)],
        ['update', () => store.update(entry.id, { state: ['claimed'] }, { state: 'verified' })],
        ['remove', () => store.remove(entry.id, { state: ['claimed'] })],
        ['query', () => store.query({})],
        ['bindIdentifier', () => store.bindIdentifier(binding)],
        ['getIdentifier', () => store.getIdentifier('k')],
        ['purgeExpired', () => store.purgeExpired(Date.now())],
      ];
      for (const [method, call] of calls) {
        await expect(call(), method).rejects.toMatchObject({
          code: 'ledger_unavailable',
          message: expect.stringMatching(/^The \w+ ledger store is closed$/),
        });
      }
      await expect(store.close()).resolves.toBeUndefined();
    });

    describeCompareAndSet(openStore);

    describe('round trips', () => {
      it.each([
        ['every byte value', ALL_BYTES],
        ['bytes that are not UTF-8', NOT_UTF8],
        ['an empty body', new Uint8Array(0)],
      ])('returns the stored response body byte for byte: %s', async (_label, body) => {
        const store = await openStore();
        const entry = buildLedgerEntry({ state: 'settling', response: response(body) });
        await store.claim(entry);
        const got = await store.get(entry.id);
        expect(got?.response?.body).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(got!.response!.body).equals(Buffer.from(body))).toBe(true);
        expect(got?.response).toEqual(response(body));

        const other = buildLedgerEntry();
        await store.claim(other);
        const updated = await store.update(
          other.id,
          { state: ['claimed'] },
          { state: 'settling', response: response(body, 402) },
        );
        expect(Buffer.from(updated!.response!.body).equals(Buffer.from(body))).toBe(true);
        const reread = await store.get(other.id);
        expect(Buffer.from(reread!.response!.body).equals(Buffer.from(body))).toBe(true);
        expect(reread?.response?.status).toBe(402);
        expect(reread?.response?.headers).toEqual(response(body).headers);
      });

      it('returns the JSON fields deep-equal', async () => {
        const store = await openStore();
        const json = {
          nested: { deeper: { list: [1, -2.5, 1e21, 0, true, false, null, 'x'] } },
          emptyList: [],
          emptyObject: {},
          unicode: 'Zürich ✓ 日本 😀 \u2028 "quoted" \\ back',
          amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
          null: null,
        };
        const entry = buildLedgerEntry({
          state: 'settled',
          payload: json,
          requirements: [json, []],
          receipt: { success: true, transaction: '0xabc', network: 'eip155:84532', extensions: json },
          error: { code: 'unexpected_settle_error', message: 'Ünïcödé message' },
        });
        await store.claim(entry);
        const got = await store.get(entry.id);
        expect(got).toEqual(entry);
        expect(got?.payload).toStrictEqual(json);
      });

      it('distinguishes a JSON null payload from an absent receipt', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry({ payload: null, requirements: 'just a string' });
        await store.claim(entry);
        const got = await store.get(entry.id);
        expect(got?.payload).toBeNull();
        expect(got?.requirements).toBe('just a string');
        expect(got?.receipt).toBeUndefined();
      });
    });

    describeQueries(openStore);

    describeIdentifierBindings({
      openStore,
      closeStore,
      newNamespace,
      durable: options.durable,
      shared: options.shared,
    });

    describePurgeRules(openStore);

    describeAccessGrants({
      openStore,
      closeStore,
      newNamespace,
      durable: options.durable,
      shared: options.shared,
    });

    describeBalanceReservations({
      openStore,
      closeStore,
      newNamespace,
      durable: options.durable,
      shared: options.shared,
    });

    // Only stores that keep data outside the process get these two (the memory store does not).
    const durableIt = options.durable ? it : undefined;
    durableIt?.('keeps entries across closing and reopening the store', async () => {
      const namespace = newNamespace('durable');
      const first = await openStore(namespace);
      const entry = buildLedgerEntry({
        state: 'settling',
        transaction: '0xdurable',
        response: response(ALL_BYTES),
      });
      await first.claim(entry);
      const settled = await first.update(
        entry.id,
        { state: ['settling'] },
        { state: 'settled', receipt: { success: true, transaction: '0xdurable' } },
      );
      await closeStore(first);

      const reopened = await openStore(namespace);
      expect(await reopened.get(entry.id)).toEqual(settled);
      expect((await reopened.claim(entry)).acquired).toBe(false);
      expect((await reopened.query({ transaction: '0xdurable' })).map((e) => e.id)).toEqual([entry.id]);
    });

    const sharedIt = options.shared ? it : undefined;
    sharedIt?.('never lets two instances both win a claim or a state change', async () => {
      const namespace = newNamespace('shared');
      const [one, two] = [await openStore(namespace), await openStore(namespace)];

      for (let round = 0; round < 10; round += 1) {
        const id = newId('shared');
        const claims = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? one : two).claim(buildLedgerEntry({ id, owner: `racer-${i}` })),
          ),
        );
        expect(claims.filter((c) => c.acquired)).toHaveLength(1);

        const updates = await Promise.all([
          one.update(id, { state: ['claimed'] }, { state: 'verified', owner: 'one' }),
          two.update(id, { state: ['claimed'] }, { state: 'verified', owner: 'two' }),
          one.update(id, { state: ['claimed'] }, { state: 'settling', owner: 'one-b' }),
          two.update(id, { state: ['claimed'] }, { state: 'settling', owner: 'two-b' }),
        ]);
        const won = updates.filter((u) => u !== undefined);
        expect(won).toHaveLength(1);
        const stored = await two.get(id);
        expect(stored).toEqual(won[0]);
        expect(await one.get(id)).toEqual(stored);

        const removals = await Promise.all([
          one.remove(id, { state: [stored!.state], owner: stored!.owner }),
          two.remove(id, { state: [stored!.state], owner: stored!.owner }),
          two.update(id, { state: [stored!.state], owner: stored!.owner }, { state: 'uncertain' }),
        ]);
        expect(removals.filter((r) => r !== false && r !== undefined)).toHaveLength(1);
      }
    });
  });
}
