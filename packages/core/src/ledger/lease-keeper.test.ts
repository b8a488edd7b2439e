import { afterEach, describe, expect, it, vi } from 'vitest';
import { LeaseKeeper } from './lease-keeper';
import { createMemoryLedgerStore } from './memory/index';
import type { LedgerEntry } from './types';

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
});
