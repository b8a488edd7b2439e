// The ledger store suite's sign-in part (docs/sign-in-with-x.md): access grants recorded once per
// payment, uses taken atomically and given back, passes that end, nonce claims that hold once
// across instances, purges, listings, durability.
import { randomBytes } from 'node:crypto';
import type { AccessGrant, AccessStore, AccessUse, LedgerStore } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import { HOUR, newId } from './ledger-store-fixtures';

export interface AccessSuiteContext {
  /** A store on a namespace of its own, or on `namespace` to reach the same data again. */
  openStore: (namespace?: string) => Promise<LedgerStore>;
  closeStore: (store: LedgerStore) => Promise<void>;
  newNamespace: (label: string) => string;
  durable: boolean;
  shared: boolean;
}

type SignInStore = LedgerStore & AccessStore;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A grant an hour long, bought by a fresh payment of a fresh payer on one route. */
export function buildGrant(overrides: Partial<AccessGrant> = {}): AccessGrant {
  const now = Date.now();
  return {
    payment: newId('grant'),
    route: 'GET /api/v1/observatory/estimates',
    network: 'eip155:84532',
    payer: `0x${randomBytes(20).toString('hex')}`.replace(/[a-f]/g, (c, i) => (i % 2 ? c.toUpperCase() : c)),
    amount: '2000',
    asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    transaction: `0x${randomBytes(32).toString('hex')}`,
    grantedAt: now,
    validUntil: now + HOUR,
    used: 0,
    expiresAt: now + 2 * HOUR,
    ...overrides,
  };
}

/** A use of `grant`'s subject now. */
const useOf = (grant: AccessGrant, overrides: Partial<AccessUse> = {}): AccessUse => ({
  route: grant.route,
  network: grant.network,
  payer: grant.payer,
  at: Date.now(),
  keepUntil: Date.now() + HOUR,
  ...overrides,
});

/** Registers the access grant and nonce claim tests. */
export function describeAccessGrants(context: AccessSuiteContext): void {
  const open = async (namespace?: string) => (await context.openStore(namespace)) as SignInStore;

  describe('access grants and nonce claims (sign-in-with-x)', () => {
    it('has every sign-in method', async () => {
      const store = await open();
      for (const method of ['grantAccess', 'useAccess', 'returnAccess', 'claimNonce', 'queryAccess'] as const)
        expect(typeof store[method], method).toBe('function');
    });

    it('records one grant per payment: a second grant for it returns the first, unchanged', async () => {
      const store = await open();
      const first = buildGrant();
      expect(await store.grantAccess(first)).toEqual(first);
      const second = buildGrant({ payment: first.payment, route: 'GET /other', uses: 9 });
      expect(await store.grantAccess(second)).toEqual(first);
      expect(await store.queryAccess({ payment: first.payment })).toEqual([first]);
    });

    it('keeps absent optional fields absent and returns numbers as numbers', async () => {
      const store = await open();
      const grant = buildGrant({ uses: 3 });
      delete grant.transaction;
      delete grant.validUntil;
      delete grant.expiresAt;
      const stored = await store.grantAccess(grant);
      expect(stored).toEqual(grant);
      for (const field of ['transaction', 'validUntil', 'expiresAt', 'lastUsedAt'] as const)
        expect(Object.keys(stored), field).not.toContain(field);
      expect(typeof stored.grantedAt).toBe('number');
      expect(stored.uses).toBe(3);
    });

    it('takes a use of the grant of exactly that route, network and payer', async () => {
      const store = await open();
      const grant = await store.grantAccess(buildGrant());
      const lowered = grant.payer.toLowerCase();
      expect(lowered).not.toBe(grant.payer);
      // Addresses are compared as given: the gate spells them once per network family.
      expect(await store.useAccess(useOf(grant, { payer: lowered }))).toBeUndefined();
      expect(
        await store.useAccess(useOf(grant, { route: 'POST /api/v1/observatory/estimates' })),
      ).toBeUndefined();
      expect(await store.useAccess(useOf(grant, { network: 'eip155:8453' }))).toBeUndefined();
      const at = Date.now();
      const used = await store.useAccess(useOf(grant, { at }));
      expect(used).toEqual({ ...grant, used: 1, lastUsedAt: at });
      expect(await store.useAccess(useOf(grant))).toMatchObject({ payment: grant.payment, used: 2 });
    });

    it('ends a pass at validUntil (exclusive) and never before', async () => {
      const store = await open();
      const grant = await store.grantAccess(buildGrant());
      expect(await store.useAccess(useOf(grant, { at: grant.validUntil! - 1 }))).toMatchObject({ used: 1 });
      expect(await store.useAccess(useOf(grant, { at: grant.validUntil! }))).toBeUndefined();
      expect(await store.useAccess(useOf(grant, { at: grant.validUntil! + 60_000 }))).toBeUndefined();
    });

    it('counts uses down to none, and keeps a grant without a pass until keepUntil once used up', async () => {
      const store = await open();
      const counted = buildGrant({ uses: 3 });
      delete counted.validUntil;
      delete counted.expiresAt;
      await store.grantAccess(counted);
      const keepUntil = Date.now() + 3 * HOUR;
      expect(await store.useAccess(useOf(counted, { keepUntil }))).not.toHaveProperty('expiresAt');
      expect(await store.useAccess(useOf(counted, { keepUntil }))).toMatchObject({ used: 2 });
      const last = await store.useAccess(useOf(counted, { keepUntil }));
      expect(last).toMatchObject({ used: 3, expiresAt: keepUntil });
      expect(await store.useAccess(useOf(counted, { keepUntil }))).toBeUndefined();
      // A grant with a pass keeps its own expiry when its uses run out.
      const both = await store.grantAccess(buildGrant({ uses: 1 }));
      expect(await store.useAccess(useOf(both, { keepUntil }))).toMatchObject({
        used: 1,
        expiresAt: both.expiresAt,
      });
      expect(await store.useAccess(useOf(both))).toBeUndefined();
    });

    it('uses the grant whose pass ends first, then counted uses, then the oldest', async () => {
      const store = await open();
      const now = Date.now();
      const base = buildGrant();
      const subject = { route: base.route, network: base.network, payer: base.payer };
      const open_ = buildGrant({ ...subject, grantedAt: now - 5000, uses: undefined, validUntil: undefined });
      delete open_.uses;
      delete open_.validUntil;
      delete open_.expiresAt;
      const later = buildGrant({ ...subject, validUntil: now + 2 * HOUR });
      const soonerOld = buildGrant({ ...subject, validUntil: now + HOUR, grantedAt: now - 2000 });
      const soonerCounted = buildGrant({ ...subject, validUntil: now + HOUR, grantedAt: now, uses: 1 });
      for (const grant of [open_, later, soonerOld, soonerCounted]) await store.grantAccess(grant);
      const order: string[] = [];
      for (let i = 0; i < 5; i += 1) order.push((await store.useAccess(useOf(base)))!.payment);
      expect(order.slice(0, 3)).toEqual([soonerCounted.payment, soonerOld.payment, soonerOld.payment]);
      // Past the sooner passes, the later one, then the one with no end.
      const pastSooner = now + HOUR;
      expect((await store.useAccess(useOf(base, { at: pastSooner })))!.payment).toBe(later.payment);
      expect((await store.useAccess(useOf(base, { at: now + 3 * HOUR })))!.payment).toBe(open_.payment);
    });

    it('gives a use back once, and keeps a used-up grant without a pass again', async () => {
      const store = await open();
      const grant = buildGrant({ uses: 1 });
      delete grant.validUntil;
      delete grant.expiresAt;
      await store.grantAccess(grant);
      expect(await store.returnAccess(grant.payment)).toBe(false);
      expect(await store.useAccess(useOf(grant))).toMatchObject({ used: 1, expiresAt: expect.any(Number) });
      expect(await store.returnAccess(grant.payment)).toBe(true);
      expect(await store.returnAccess(grant.payment)).toBe(false);
      const [after] = await store.queryAccess({ payment: grant.payment });
      expect(after).toMatchObject({ used: 0 });
      expect(after).not.toHaveProperty('expiresAt');
      expect(await store.useAccess(useOf(grant))).toMatchObject({ used: 1 });
      expect(await store.returnAccess(newId('unknown'))).toBe(false);
    });

    it('lets exactly five of twenty concurrent uses of a five-use grant through', async () => {
      const store = await open();
      const grant = await store.grantAccess(buildGrant({ uses: 5 }));
      const results = await Promise.all(Array.from({ length: 20 }, () => store.useAccess(useOf(grant))));
      expect(results.filter((r) => r !== undefined)).toHaveLength(5);
      expect(new Set(results.filter((r) => r !== undefined).map((r) => r!.used))).toEqual(
        new Set([1, 2, 3, 4, 5]),
      );
      expect((await store.queryAccess({ payment: grant.payment }))[0]?.used).toBe(5);
    });

    it('claims a nonce once, and one of fifty concurrent claims wins', async () => {
      const store = await open();
      const nonce = randomBytes(24).toString('hex');
      expect(await store.claimNonce(nonce, Date.now() + HOUR)).toBe(true);
      expect(await store.claimNonce(nonce, Date.now() + HOUR)).toBe(false);
      const raced = randomBytes(24).toString('hex');
      const claims = await Promise.all(
        Array.from({ length: 50 }, () => store.claimNonce(raced, Date.now() + HOUR)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
    });

    it('lets a nonce be claimed again only once its claim has passed', async () => {
      const store = await open();
      const nonce = randomBytes(24).toString('hex');
      expect(await store.claimNonce(nonce, Date.now() + 300)).toBe(true);
      expect(await store.claimNonce(nonce, Date.now() + HOUR)).toBe(false);
      await sleep(450);
      await store.purgeExpired(Date.now());
      expect(await store.claimNonce(nonce, Date.now() + HOUR)).toBe(true);
      expect(await store.claimNonce(nonce, Date.now() + HOUR)).toBe(false);
    });

    it('purges grants that expired before the given time, and only those', async () => {
      const store = await open();
      const at = Date.now() + 10 * HOUR;
      const expired = await store.grantAccess(buildGrant({ expiresAt: at - 1 }));
      const kept = await store.grantAccess(buildGrant({ expiresAt: at }));
      const open_ = buildGrant({ uses: 2 });
      delete open_.validUntil;
      delete open_.expiresAt;
      await store.grantAccess(open_);
      expect(await store.purgeExpired(at)).toBe(1);
      expect(await store.queryAccess({ payment: expired.payment })).toEqual([]);
      expect(await store.useAccess(useOf(expired))).toBeUndefined();
      expect(await store.queryAccess({ payment: kept.payment })).toEqual([kept]);
      expect(await store.queryAccess({ payment: open_.payment })).toEqual([open_]);
      // Recorded again after its purge, a payment's grant starts afresh.
      expect(await store.grantAccess(expired)).toEqual(expired);
    });

    it('lists grants newest first, by payment, payer or route, within the limit', async () => {
      const store = await open();
      const now = Date.now();
      const payer = buildGrant().payer;
      const grants = [
        buildGrant({ payer, grantedAt: now - 3000 }),
        buildGrant({ payer, grantedAt: now - 2000, route: 'GET /api/v1/landscape' }),
        buildGrant({ grantedAt: now - 1000 }),
      ];
      for (const grant of grants) await store.grantAccess(grant);
      const ids = (list: AccessGrant[]) => list.map((g) => g.payment);
      expect(ids(await store.queryAccess({}))).toEqual(
        [grants[2]!, grants[1]!, grants[0]!].map((g) => g.payment),
      );
      expect(ids(await store.queryAccess({ payer }))).toEqual([grants[1]!.payment, grants[0]!.payment]);
      expect(ids(await store.queryAccess({ route: 'GET /api/v1/landscape' }))).toEqual([grants[1]!.payment]);
      expect(ids(await store.queryAccess({ payer, route: grants[2]!.route }))).toEqual([grants[0]!.payment]);
      expect(ids(await store.queryAccess({ limit: 2 }))).toEqual([grants[2]!.payment, grants[1]!.payment]);
      expect(await store.queryAccess({ limit: 0 })).toEqual([]);
      await expect(store.queryAccess({ limit: -1 })).rejects.toMatchObject({ code: 'invalid_config' });
    });

    it('refuses every sign-in method once closed', async () => {
      const store = await open();
      await context.closeStore(store);
      const grant = buildGrant();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['grantAccess', () => store.grantAccess(grant)],
        ['useAccess', () => store.useAccess(useOf(grant))],
        ['returnAccess', () => store.returnAccess(grant.payment)],
        ['claimNonce', () => store.claimNonce('n0nce0000', Date.now() + HOUR)],
        ['queryAccess', () => store.queryAccess({})],
      ];
      for (const [method, call] of calls)
        await expect(call(), method).rejects.toMatchObject({ code: 'ledger_unavailable' });
    });

    // Only stores that keep data outside the process get these two (the memory store does not).
    const durableIt = context.durable ? it : undefined;
    durableIt?.('keeps grants and nonce claims across closing and reopening', async () => {
      const namespace = context.newNamespace('accessdurable');
      const first = await open(namespace);
      const grant = await first.grantAccess(buildGrant({ uses: 4 }));
      await first.useAccess(useOf(grant));
      const nonce = randomBytes(24).toString('hex');
      expect(await first.claimNonce(nonce, Date.now() + HOUR)).toBe(true);
      await context.closeStore(first);
      const reopened = await open(namespace);
      expect(await reopened.queryAccess({ payment: grant.payment })).toEqual([
        { ...grant, used: 1, lastUsedAt: expect.any(Number) },
      ]);
      expect(await reopened.useAccess(useOf(grant))).toMatchObject({ used: 2 });
      expect(await reopened.claimNonce(nonce, Date.now() + HOUR)).toBe(false);
    });

    const sharedIt = context.shared ? it : undefined;
    sharedIt?.('never lets two instances take one use twice or both claim a nonce', async () => {
      const namespace = context.newNamespace('accessshared');
      const [one, two] = [await open(namespace), await open(namespace)];
      const grant = await one.grantAccess(buildGrant({ uses: 6 }));
      expect(await two.grantAccess({ ...grant, uses: 100 })).toEqual(grant);
      const uses = await Promise.all(
        Array.from({ length: 16 }, (_, i) => (i % 2 ? one : two).useAccess(useOf(grant))),
      );
      expect(uses.filter((u) => u !== undefined)).toHaveLength(6);
      expect((await two.queryAccess({ payment: grant.payment }))[0]?.used).toBe(6);
      for (let round = 0; round < 5; round += 1) {
        const nonce = randomBytes(24).toString('hex');
        const claims = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).claimNonce(nonce, Date.now() + HOUR)),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
      }
    });
  });
}
