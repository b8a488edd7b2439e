import { randomBytes } from 'node:crypto';
import type { IdentifierBinding, LedgerStore } from '@tollbooth/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ALL_BYTES, buildLedgerEntry, HOUR, NOT_UTF8, newId, response } from './ledger-store-fixtures';
import { describePurgeRules } from './ledger-store-purge-suite';

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
    /** A store on a namespace of its own (or on `namespace`, to reach the same data again). */
    const openStore = async (namespace = `ns${++namespaces}`): Promise<LedgerStore> => {
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
      for (const field of ['payer', 'transaction', 'receipt', 'response', 'error'] as const) {
        expect(got?.[field], field).toBeUndefined();
      }
    });

    describe('update', () => {
      it('applies the patch only from an expected state and returns the updated entry', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry();
        await store.claim(entry);
        const before = Date.now();

        expect(
          await store.update(entry.id, { state: ['verified', 'settling'] }, { state: 'settled' }),
        ).toBeUndefined();
        expect((await store.get(entry.id))?.state).toBe('claimed');

        const updated = await store.update(
          entry.id,
          { state: ['claimed'] },
          { state: 'verified', leaseUntil: 42 },
        );
        expect(updated).toEqual({
          ...entry,
          state: 'verified',
          leaseUntil: 42,
          updatedAt: updated?.updatedAt,
        });
        expect(updated!.updatedAt).toBeGreaterThanOrEqual(before);
        expect(await store.get(entry.id)).toEqual(updated);
      });

      it('applies the patch only for the expected owner', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry({ state: 'settling', owner: 'instance-a:req-1' });
        await store.claim(entry);

        const stolen = await store.update(
          entry.id,
          { state: ['settling'], owner: 'instance-b:req-2' },
          { state: 'settled', owner: 'instance-b:req-2' },
        );
        expect(stolen).toBeUndefined();
        expect(await store.get(entry.id)).toEqual(entry);

        const own = await store.update(
          entry.id,
          { state: ['settling'], owner: 'instance-a:req-1' },
          { state: 'uncertain' },
        );
        expect(own?.state).toBe('uncertain');
        expect(own?.owner).toBe('instance-a:req-1');
      });

      it('returns undefined for an unknown id', async () => {
        const store = await openStore();
        expect(
          await store.update(newId('missing'), { state: ['claimed'] }, { state: 'verified' }),
        ).toBeUndefined();
        expect(await store.get(newId('missing'))).toBeUndefined();
      });

      it('sets every patchable field and leaves fields patched with undefined unchanged', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry({ transaction: '0xold', error: { code: 'x', message: 'y' } });
        await store.claim(entry);
        const patch = {
          state: 'settled' as const,
          resource: 'https://fees.example/api/v1/fees/later',
          route: 'GET /api/v1/fees/later',
          network: 'eip155:8453',
          payer: '0xnewpayer',
          payload: { replaced: true },
          requirements: [1, 'two', { three: 3 }],
          validBefore: 1_900_000_000,
          transaction: '0xnew',
          receipt: { success: true, transaction: '0xnew', network: 'eip155:8453', payer: '0xnewpayer' },
          response: response(NOT_UTF8, 201),
          error: { code: 'settlement_pending', message: 'still pending' },
          resolution: {
            by: 'reconciler' as const,
            instance: 'instance-c',
            at: 1_800_000_000_123,
            from: 'uncertain' as const,
            action: 'confirmed-on-chain' as const,
            attempts: 2,
            note: 'Transfer found in block 12',
          },
          owner: 'instance-c:req-3',
          leaseUntil: entry.leaseUntil + 1,
          expiresAt: entry.expiresAt + 1,
        };
        const updated = await store.update(entry.id, { state: ['claimed'] }, patch);
        expect(updated).toEqual({ ...entry, ...patch, updatedAt: updated?.updatedAt });
        expect(await store.get(entry.id)).toEqual(updated);

        const kept = await store.update(
          entry.id,
          { state: ['settled'] },
          {
            state: 'settled',
            transaction: undefined,
            receipt: undefined,
            response: undefined,
            error: undefined,
            resolution: undefined,
          },
        );
        expect(kept).toEqual({ ...updated, updatedAt: kept?.updatedAt });
      });
    });

    describe('invariant: an error after settlement is never the paid answer', () => {
      it.each([500, 503, 402, 400])(
        'refuses to settle an entry with a %i response, changing nothing',
        async (status) => {
          const store = await openStore();
          const entry = buildLedgerEntry({ state: 'settling' });
          await store.claim(entry);
          await expect(
            store.update(
              entry.id,
              { state: ['settling'] },
              { state: 'settled', response: response(ALL_BYTES, status) },
            ),
          ).rejects.toMatchObject({ code: 'ledger_invariant_violation' });
          expect(await store.get(entry.id)).toEqual(entry);
        },
      );

      it('refuses a claim of a settled entry holding an error response', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry({ state: 'settled', response: response(ALL_BYTES, 500) });
        await expect(store.claim(entry)).rejects.toMatchObject({ code: 'ledger_invariant_violation' });
        expect(await store.get(entry.id)).toBeUndefined();
      });

      it('does not settle an entry that keeps an error response it already holds', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry({ state: 'rejected', response: response(ALL_BYTES, 402) });
        await store.claim(entry);
        expect(await store.update(entry.id, { state: ['rejected'] }, { state: 'settled' })).toBeUndefined();
        expect(await store.get(entry.id)).toEqual(entry);
      });

      it('settles with a 2xx response, or with none (the handler runs on the next retry)', async () => {
        const store = await openStore();
        const withResponse = buildLedgerEntry({ state: 'settling', response: response(ALL_BYTES, 200) });
        const without = buildLedgerEntry({ state: 'settling' });
        await store.claim(withResponse);
        await store.claim(without);
        expect(
          (await store.update(withResponse.id, { state: ['settling'] }, { state: 'settled' }))?.state,
        ).toBe('settled');
        expect((await store.update(without.id, { state: ['settling'] }, { state: 'settled' }))?.state).toBe(
          'settled',
        );
        const rejected = await store.update(
          without.id,
          { state: ['settled'] },
          { state: 'rejected', response: response(ALL_BYTES, 402) },
        );
        expect(rejected?.response?.status).toBe(402);
      });
    });

    describe('remove', () => {
      it('deletes only from an expected state and owner', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry({ state: 'verified' });
        await store.claim(entry);

        expect(await store.remove(entry.id, { state: ['claimed'] })).toBe(false);
        expect(await store.remove(entry.id, { state: ['verified'], owner: 'someone-else' })).toBe(false);
        expect(await store.get(entry.id)).toEqual(entry);

        expect(await store.remove(entry.id, { state: ['claimed', 'verified'], owner: entry.owner })).toBe(
          true,
        );
        expect(await store.get(entry.id)).toBeUndefined();
        expect(await store.remove(entry.id, { state: ['verified'] })).toBe(false);
      });

      it('frees the id for a new claim', async () => {
        const store = await openStore();
        const entry = buildLedgerEntry();
        await store.claim(entry);
        expect(await store.remove(entry.id, { state: ['claimed'] })).toBe(true);
        const reclaimed = await store.claim({ ...entry, owner: 'instance-b:req-2' });
        expect(reclaimed.acquired).toBe(true);
        expect((await store.get(entry.id))?.owner).toBe('instance-b:req-2');
      });
    });

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

    describe('query', () => {
      const seed = async (store: LedgerStore) => {
        const t = Date.now();
        const entries = [
          buildLedgerEntry({ state: 'settled', transaction: '0xt1', payer: '0xp1', createdAt: t - 5 }),
          buildLedgerEntry({ state: 'settled', transaction: '0xt2', payer: '0xp2', createdAt: t - 4 }),
          buildLedgerEntry({ state: 'uncertain', transaction: '0xt1', payer: '0xp1', createdAt: t - 3 }),
          buildLedgerEntry({ state: 'claimed', payer: '0xp1', createdAt: t - 2 }),
          buildLedgerEntry({ state: 'rejected', payer: '0xp2', createdAt: t - 1 }),
        ];
        for (const entry of entries) await store.claim(entry);
        return entries.map((e) => e.id);
      };

      it('filters by id, state, states, transaction and payer, newest first', async () => {
        const store = await openStore();
        const [a, b, c, d, e] = await seed(store);
        const ids = async (q: Parameters<LedgerStore['query']>[0]) => (await store.query(q)).map((x) => x.id);

        expect(await ids({})).toEqual([e, d, c, b, a]);
        expect(await ids({ id: c })).toEqual([c]);
        expect(await ids({ id: newId('missing') })).toEqual([]);
        expect(await ids({ state: 'settled' })).toEqual([b, a]);
        expect(await ids({ state: ['uncertain', 'claimed'] })).toEqual([d, c]);
        expect(await ids({ state: [] })).toEqual([]);
        expect(await ids({ transaction: '0xt1' })).toEqual([c, a]);
        expect(await ids({ payer: '0xp1' })).toEqual([d, c, a]);
        expect(await ids({ payer: '0xp1', state: 'settled' })).toEqual([a]);
        expect(await ids({ transaction: '0xt1', state: 'settled', payer: '0xp2' })).toEqual([]);
        expect(await ids({ id: a, state: 'rejected' })).toEqual([]);
        expect(await ids({ limit: 2 })).toEqual([e, d]);
        expect(await ids({ state: ['settled', 'rejected', 'claimed'], limit: 2 })).toEqual([e, d]);
      });

      it('follows state changes and returns whole entries', async () => {
        const store = await openStore();
        const [a] = await seed(store);
        await store.update(a!, { state: ['settled'] }, { state: 'rejected', transaction: '0xt9' });
        expect((await store.query({ state: 'settled' })).map((x) => x.id)).not.toContain(a);
        expect((await store.query({ state: 'rejected' })).map((x) => x.id)).toContain(a);
        expect((await store.query({ transaction: '0xt1' })).map((x) => x.id)).not.toContain(a);
        const [found] = await store.query({ transaction: '0xt9' });
        expect(found).toEqual(await store.get(a!));
      });

      it('orders entries created in the same millisecond by id, descending', async () => {
        const store = await openStore();
        const createdAt = Date.now();
        const suffix = randomBytes(4).toString('hex');
        for (const id of [`tie-b-${suffix}`, `tie-c-${suffix}`, `tie-a-${suffix}`]) {
          await store.claim(buildLedgerEntry({ id, createdAt, payer: `0xtie${suffix}` }));
        }
        expect((await store.query({ payer: `0xtie${suffix}` })).map((e) => e.id)).toEqual([
          `tie-c-${suffix}`,
          `tie-b-${suffix}`,
          `tie-a-${suffix}`,
        ]);
        expect((await store.query({ state: 'claimed', limit: 2 })).map((e) => e.id)).toEqual([
          `tie-c-${suffix}`,
          `tie-b-${suffix}`,
        ]);
      });

      it('filters by lease end: only entries whose lease ended before the given time', async () => {
        const store = await openStore();
        const t = Date.now();
        const payer = `0xlease${randomBytes(4).toString('hex')}`;
        const ended = buildLedgerEntry({ state: 'settling', payer, leaseUntil: t - 1, createdAt: t - 2 });
        const free = buildLedgerEntry({ state: 'uncertain', payer, leaseUntil: 0, createdAt: t - 1 });
        const live = buildLedgerEntry({ state: 'settling', payer, leaseUntil: t + 60_000, createdAt: t });
        const at = buildLedgerEntry({ state: 'claimed', payer, leaseUntil: t, createdAt: t + 1 });
        for (const entry of [ended, free, live, at]) await store.claim(entry);
        const ids = async (q: Parameters<LedgerStore['query']>[0]) => (await store.query(q)).map((x) => x.id);
        expect(await ids({ payer, leaseUntilBefore: t })).toEqual([free.id, ended.id]);
        expect(await ids({ state: ['settling', 'uncertain', 'claimed'], leaseUntilBefore: t + 1 })).toEqual(
          expect.arrayContaining([at.id, free.id, ended.id]),
        );
        expect(await ids({ state: 'settling', leaseUntilBefore: t })).toContain(ended.id);
        expect(await ids({ state: 'settling', leaseUntilBefore: t })).not.toContain(live.id);
        await store.update(live.id, { state: ['settling'] }, { state: 'settling', leaseUntil: t - 5 });
        expect(await ids({ payer, state: 'settling', leaseUntilBefore: t })).toEqual([live.id, ended.id]);
      });

      it('returns at most 100 entries by default', async () => {
        const store = await openStore();
        await Promise.all(Array.from({ length: 105 }, () => store.claim(buildLedgerEntry())));
        expect(await store.query({})).toHaveLength(100);
        expect(await store.query({ limit: 105 })).toHaveLength(105);
      });
    });

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
        expect(tries.some((b) => b.entry === winner.entry && b.fingerprint === winner.fingerprint)).toBe(
          true,
        );
        for (const result of results) expect(result).toEqual(winner);
      });

      // Expired by the real clock: Redis deletes a binding itself at its expiresAt.
      it('purges bindings that expired before the given time, and only those', async () => {
        const store = await openStore();
        const now = Date.now();
        const old = binding({ expiresAt: now - 1_000 });
        const kept = binding({ expiresAt: now + HOUR });
        await store.bindIdentifier(old);
        await store.bindIdentifier(kept);
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

      if (options.durable) {
        it('keeps bindings across closing and reopening the store', async () => {
          const namespace = `bindings${++namespaces}`;
          const first = await openStore(namespace);
          const stored = binding();
          await first.bindIdentifier(stored);
          await closeStore(first);
          const reopened = await openStore(namespace);
          expect(await reopened.getIdentifier(stored.key)).toEqual(stored);
        });
      }

      if (options.shared) {
        it('never lets two instances both bind one key', async () => {
          const namespace = `bindings${++namespaces}`;
          const [one, two] = [await openStore(namespace), await openStore(namespace)];
          for (let round = 0; round < 10; round += 1) {
            const key = binding().key;
            const tries = Array.from({ length: 6 }, () => binding({ key }));
            const results = await Promise.all(
              tries.map((b, i) => (i % 2 === 0 ? one : two).bindIdentifier(b)),
            );
            for (const result of results) expect(result).toEqual(results[0]);
            expect(await one.getIdentifier(key)).toEqual(results[0]);
            expect(await two.getIdentifier(key)).toEqual(results[0]);
          }
        });
      }
    });

    describePurgeRules(openStore);

    // Only stores that keep data outside the process get these two (the memory store does not).
    const durableIt = options.durable ? it : undefined;
    durableIt?.('keeps entries across closing and reopening the store', async () => {
      const namespace = `durable${++namespaces}`;
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
      const namespace = `shared${++namespaces}`;
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
