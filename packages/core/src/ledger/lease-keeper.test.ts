import { afterEach, describe, expect, it, vi } from 'vitest';
import { LeaseKeeper } from './lease-keeper';
import { createMemoryLedgerStore } from './memory/index';
import type { LedgerEntry, LedgerStore } from './types';

const LEASE = 9_000;
let clock = 1_000_000;

function entry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    id: `id-${Math.random()}`,
    state: 'claimed',
    resource: 'https://api.example.com/paid',
    route: 'GET /paid',
    network: 'eip155:8453',
    payload: {},
    requirements: {},
    validBefore: 2_000_000_000,
    owner: 'a:req-1',
    leaseUntil: clock + LEASE,
    createdAt: clock,
    updatedAt: clock,
    expiresAt: clock + 3_600_000,
    ...overrides,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LeaseKeeper', () => {
  it('pushes the lease of a held entry forward, following its state', async () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const held = entry();
    await store.claim(held);
    keeper.hold(held, 'claimed');
    clock += 5_000;
    await keeper.renewAll();
    expect((await store.get(held.id))?.leaseUntil).toBe(clock + LEASE);

    await store.update(held.id, { state: ['claimed'] }, { state: 'settling' });
    keeper.moved(held, 'settling');
    clock += 5_000;
    await keeper.renewAll();
    expect(await store.get(held.id)).toMatchObject({ state: 'settling', leaseUntil: clock + LEASE });
    keeper.stop();
  });

  it('never renews an entry that moved on without it or that another owner took over', async () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const moved = entry();
    const taken = entry();
    await store.claim(moved);
    await store.claim(taken);
    keeper.hold(moved, 'claimed');
    keeper.hold(taken, 'claimed');
    await store.update(moved.id, { state: ['claimed'] }, { state: 'uncertain', leaseUntil: 0 });
    await store.update(
      taken.id,
      { state: ['claimed'] },
      { state: 'claimed', owner: 'b:req-2', leaseUntil: 7 },
    );
    clock += 1_000;
    await keeper.renewAll();
    expect(await store.get(moved.id)).toMatchObject({ state: 'uncertain', leaseUntil: 0 });
    expect(await store.get(taken.id)).toMatchObject({ owner: 'b:req-2', leaseUntil: 7 });
    keeper.stop();
  });

  it('stops renewing once let go, after the renewal in flight', async () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const held = entry();
    await store.claim(held);
    keeper.hold(held, 'claimed');
    const renewal = keeper.renewAll();
    await keeper.letGo(held);
    await renewal;
    expect(keeper.holds(held)).toBe(false);
    await store.update(held.id, { state: ['claimed'] }, { state: 'claimed', leaseUntil: 0 });
    clock += 1_000;
    await keeper.renewAll();
    expect((await store.get(held.id))?.leaseUntil).toBe(0);
  });

  it('renews on its own every third of the lease while something is held', async () => {
    vi.useFakeTimers();
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const held = entry();
    await store.claim(held);
    keeper.hold(held, 'claimed');
    clock += 3_000;
    await vi.advanceTimersByTimeAsync(3_000);
    expect((await store.get(held.id))?.leaseUntil).toBe(clock + LEASE);
    await keeper.letGo(held);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports a renewal the store refused and tries again next round', async () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const errors: unknown[] = [];
    const keeper = new LeaseKeeper({
      store,
      leaseMs: LEASE,
      now: () => clock,
      onError: (e) => errors.push(e),
    });
    const held = entry();
    await store.claim(held);
    keeper.hold(held, 'claimed');
    await store.close();
    await keeper.renewAll();
    expect(errors).toHaveLength(1);
    expect(keeper.holds(held)).toBe(true);
    keeper.stop();
  });

  it('renews on its own every renewEveryMs when given, and every third of a lease rounded down otherwise', async () => {
    vi.useFakeTimers();
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const given = new LeaseKeeper({ store, leaseMs: LEASE, renewEveryMs: 500, now: () => clock });
    const byDefault = new LeaseKeeper({ store, leaseMs: 10, now: () => clock });
    const a = entry();
    const b = entry();
    await store.claim(a);
    await store.claim(b);
    given.hold(a, 'claimed');
    byDefault.hold(b, 'claimed');
    clock += 1;
    await vi.advanceTimersByTimeAsync(499);
    expect((await store.get(a.id))?.leaseUntil).toBe(a.leaseUntil);
    await vi.advanceTimersByTimeAsync(1);
    expect((await store.get(a.id))?.leaseUntil).toBe(clock + LEASE);
    // 10 / 3 rounds down to 3: renewed at 3 ms (and 6 ms), not 3.33 ms.
    expect((await store.get(b.id))?.leaseUntil).toBe(clock + 10);
    given.stop();
    byDefault.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('renews every millisecond when a third of the lease is less than one', async () => {
    vi.useFakeTimers();
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: 2, now: () => clock });
    const held = entry();
    await store.claim(held);
    keeper.hold(held, 'claimed');
    clock += 1;
    await vi.advanceTimersByTimeAsync(1);
    expect((await store.get(held.id))?.leaseUntil).toBe(clock + 2);
    keeper.stop();
  });

  it('counts each held entry once, an entry held again taking the new state', async () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const one = entry();
    const two = entry({ owner: 'a:req-2' });
    await store.claim(one);
    await store.claim(two);
    keeper.hold(one, 'claimed');
    keeper.hold(two, 'claimed');
    // Same id, another owner: another lease.
    keeper.hold({ id: one.id, owner: 'b:req-3' }, 'claimed');
    expect(keeper.size).toBe(3);
    await store.update(one.id, { state: ['claimed'] }, { state: 'verified' });
    keeper.hold(one, 'verified');
    expect(keeper.size).toBe(3);
    clock += 1_000;
    await keeper.renewAll();
    expect(await store.get(one.id)).toMatchObject({ state: 'verified', leaseUntil: clock + LEASE });
    expect(keeper.holds({ id: one.id, owner: 'b:req-3' })).toBe(true);
    expect(keeper.holds({ id: one.id, owner: 'c:req-4' })).toBe(false);
    keeper.stop();
    expect(keeper.size).toBe(0);
    expect(keeper.holds(one)).toBe(false);
  });

  it('ignores a move of an entry it does not hold, and letting go of one', async () => {
    vi.useFakeTimers();
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const held = entry();
    keeper.moved(held, 'settling');
    expect(keeper.holds(held)).toBe(false);
    await keeper.letGo(held);
    expect(keeper.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps one timer, running until the last held entry is let go', async () => {
    vi.useFakeTimers();
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const one = entry();
    const two = entry();
    await store.claim(one);
    await store.claim(two);
    keeper.hold(one, 'claimed');
    keeper.hold(two, 'claimed');
    expect(vi.getTimerCount()).toBe(1);
    await keeper.letGo(one);
    expect(vi.getTimerCount()).toBe(1);
    clock += 3_000;
    await vi.advanceTimersByTimeAsync(3_000);
    expect((await store.get(two.id))?.leaseUntil).toBe(clock + LEASE);
    await keeper.letGo(two);
    expect(vi.getTimerCount()).toBe(0);
    // Held again: the timer comes back.
    keeper.hold(one, 'claimed');
    expect(vi.getTimerCount()).toBe(1);
    keeper.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never keeps the process alive with its timer', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const before = timers();
    keeper.hold(entry(), 'claimed');
    expect(timers()).toBe(before);
    keeper.stop();
  });

  it('starts no second renewal of an entry while one is in flight, and waits for it when let go', async () => {
    const inner = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    // The real store, with renewals held back until the test lets them through.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let updates = 0;
    const store: LedgerStore = {
      ...inner,
      update: async (...args) => {
        updates += 1;
        await gate;
        return inner.update(...args);
      },
    };
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const held = entry();
    await inner.claim(held);
    keeper.hold(held, 'claimed');
    clock += 1_000;
    const renewedUntil = clock + LEASE;
    const first = keeper.renewAll();
    await keeper.renewAll();
    expect(updates).toBe(1);
    // Held again while renewing: still the same renewal to wait for.
    keeper.hold(held, 'claimed');
    let letGo = false;
    const going = keeper.letGo(held).then(() => {
      letGo = true;
    });
    // A turn of the event loop: the renewal is still held back.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(letGo).toBe(false);
    expect((await inner.get(held.id))?.leaseUntil).toBe(held.leaseUntil);
    release();
    await going;
    // The renewal landed before letGo resolved.
    expect((await inner.get(held.id))?.leaseUntil).toBe(renewedUntil);
    await first;
  });

  it('swallows a failed renewal when nobody listens for errors', async () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const keeper = new LeaseKeeper({ store, leaseMs: LEASE, now: () => clock });
    const held = entry();
    await store.claim(held);
    keeper.hold(held, 'claimed');
    await store.close();
    await expect(keeper.renewAll()).resolves.toBeUndefined();
    expect(keeper.holds(held)).toBe(true);
    keeper.stop();
  });
});
