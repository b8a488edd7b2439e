// The ledger store suite's queries: filters, order, limits (docs/ledger.md).
import { randomBytes } from 'node:crypto';
import type { LedgerStore } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import { buildLedgerEntry, newId } from './ledger-store-fixtures';

/** Registers the query tests; `openStore` gives a store on a namespace of its own. */
export function describeQueries(openStore: () => Promise<LedgerStore>): void {
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

    it('applies every other filter to the entry an id query finds', async () => {
      const store = await openStore();
      const [a] = await seed(store);
      const entry = await store.get(a!);
      const ids = async (q: Parameters<LedgerStore['query']>[0]) => (await store.query(q)).map((x) => x.id);
      expect(await ids({ id: a, state: 'settled', transaction: '0xt1', payer: '0xp1' })).toEqual([a]);
      expect(await ids({ id: a, leaseUntilBefore: entry!.leaseUntil + 1 })).toEqual([a]);
      expect(await ids({ id: a, state: ['claimed', 'rejected'] })).toEqual([]);
      expect(await ids({ id: a, transaction: '0xt2' })).toEqual([]);
      expect(await ids({ id: a, payer: '0xp2' })).toEqual([]);
      expect(await ids({ id: a, leaseUntilBefore: entry!.leaseUntil })).toEqual([]);
      expect(await ids({ id: a, limit: 0 })).toEqual([]);
    });

    it('lists an entry once when its state is asked for twice', async () => {
      const store = await openStore();
      const [a, b] = await seed(store);
      expect((await store.query({ state: ['settled', 'settled'] })).map((x) => x.id)).toEqual([b, a]);
      expect((await store.query({ state: ['settled', 'settled'], limit: 1 })).map((x) => x.id)).toEqual([b]);
    });

    it('returns nothing for a limit of 0', async () => {
      const store = await openStore();
      await seed(store);
      expect(await store.query({ limit: 0 })).toEqual([]);
      expect(await store.query({ state: 'settled', limit: 0 })).toEqual([]);
      expect(await store.query({ payer: '0xp1', limit: 0 })).toEqual([]);
    });

    it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
      'refuses a limit of %s as invalid_config',
      async (limit) => {
        const store = await openStore();
        await seed(store);
        await expect(store.query({ limit })).rejects.toMatchObject({
          code: 'invalid_config',
          message: `limit must be a non-negative integer (got ${limit})`,
        });
      },
    );

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

    it('orders ties by id, descending, across the states of one query too', async () => {
      const store = await openStore();
      const createdAt = Date.now();
      const suffix = randomBytes(4).toString('hex');
      const states = { a: 'settled', b: 'claimed', c: 'rejected', d: 'claimed' } as const;
      for (const [letter, state] of Object.entries(states)) {
        await store.claim(buildLedgerEntry({ id: `tie-${letter}-${suffix}`, state, createdAt }));
      }
      // Newer than the ties, and first though its id is the lowest.
      await store.claim(
        buildLedgerEntry({ id: `tie-0-${suffix}`, state: 'rejected', createdAt: createdAt + 1 }),
      );
      const ids = (await store.query({ state: ['claimed', 'rejected', 'settled'] })).map((e) => e.id);
      expect(ids).toEqual(['0', 'd', 'c', 'b', 'a'].map((letter) => `tie-${letter}-${suffix}`));
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
}
