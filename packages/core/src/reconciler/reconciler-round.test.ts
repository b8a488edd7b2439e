// One reconciler on its own (reconciler.ts): what a round counts, logs and reports, how long an
// unresolved entry waits, the first round's own entries, failures, and its timer.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GateHooks } from '../gate/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { SettlementLedger } from '../ledger/settlement-ledger';
import type { LedgerEntry, LedgerStore } from '../ledger/types';
import { NETWORK, recordingLogger } from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import {
  buildPayment,
  createSimpleScheme,
  TEST_ASSET,
  TEST_PAY_TO,
  TEST_PAYER,
} from '../test-support/simple-scheme';
import { createLedgerReconciler, type LedgerReconcilerOptions } from './reconciler';

const NOW = 1_800_000_000_000;
const requirements = {
  scheme: 'exact',
  network: NETWORK,
  amount: '1000',
  asset: TEST_ASSET,
  payTo: TEST_PAY_TO,
  maxTimeoutSeconds: 60,
  extra: {},
};

/** A reconciler over a memory ledger with a manual clock, the simple scheme, a recording logger. */
function setup(options: Partial<LedgerReconcilerOptions> = {}, instanceId = 'alpha') {
  const clock = { now: NOW };
  const store: LedgerStore = createMemoryLedgerStore({ purgeIntervalMs: 0, now: () => clock.now });
  const ledger = new SettlementLedger({
    store,
    instanceId,
    leaseMs: 10_000,
    retentionMs: 60_000,
    now: () => clock.now,
  });
  const scheme = createSimpleScheme();
  const logger = recordingLogger();
  const seen: Array<{ hook: string; args: unknown[] }> = [];
  const hooks: Pick<GateHooks, 'onTransfer' | 'onResolved'> = {
    onTransfer: (...args) => void seen.push({ hook: 'onTransfer', args }),
    onResolved: (...args) => void seen.push({ hook: 'onResolved', args }),
  };
  const reconciler = createLedgerReconciler({
    ledger,
    schemes: [scheme],
    intervalMs: 0,
    now: () => clock.now,
    logger,
    hooks,
    ...options,
  });
  let n = 0;
  /** An entry of a dead owner (lease run out) in `state`. */
  async function entry(fields: Partial<LedgerEntry> = {}): Promise<LedgerEntry> {
    n += 1;
    const made: LedgerEntry = {
      id: `id-${n}`,
      state: 'uncertain',
      resource: 'https://api.example.com/paid',
      route: 'GET /paid',
      network: NETWORK,
      payer: TEST_PAYER,
      payload: buildPayment(requirements, { now: NOW / 1000 }),
      requirements,
      validBefore: NOW / 1000 + 60,
      owner: 'dead:r',
      leaseUntil: 0,
      createdAt: NOW - 1,
      updatedAt: NOW - 1,
      expiresAt: NOW + 1_000_000,
      ...fields,
    };
    await store.claim(made);
    return made;
  }
  return { clock, store, ledger, scheme, logger, seen, reconciler, entry };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a round', () => {
  it('counts and logs each entry it resolves, and totals the rounds', async () => {
    const s = setup();
    const released = await s.entry({ state: 'claimed' });
    await s.entry({ state: 'verified' });
    const confirmed = await s.entry({ id: 'confirmed' });
    await s.entry({ id: 'expired' });
    await s.entry({ id: 'unknown' });
    // The chain answers per entry: settled for `confirmed`, expired for `expired`, unknown otherwise.
    const byPayload = new Map<unknown, string>();
    for (const e of await s.store.query({})) byPayload.set(JSON.stringify(e.payload), e.id);
    s.scheme.reconcileAnswer = (input) => {
      const id = byPayload.get(JSON.stringify(input.payload));
      if (id === 'confirmed')
        return { status: 'settled', receipt: { success: true, transaction: TEST_TX, network: NETWORK } };
      if (id === 'expired') return { status: 'expired' };
      return { status: 'unknown', message: 'no answer' };
    };
    const round = await s.reconciler.runOnce();
    expect(round).toEqual({
      examined: 5,
      released: 2,
      abandoned: 0,
      confirmed: 1,
      expired: 1,
      unresolved: 1,
      skipped: 0,
    });
    expect(s.reconciler.stats()).toEqual({ ...round, rounds: 1, lastRoundAt: NOW });
    const releasedLines = s.logger.lines.filter((l) => l.message === 'ledger reconciler released an entry');
    expect(releasedLines).toHaveLength(2);
    expect(releasedLines).toEqual(
      expect.arrayContaining([
        {
          level: 'info',
          fields: { id: released.id, route: 'GET /paid', from: 'claimed' },
          message: 'ledger reconciler released an entry',
        },
        {
          level: 'info',
          fields: { id: 'id-2', route: 'GET /paid', from: 'verified' },
          message: 'ledger reconciler released an entry',
        },
      ]),
    );
    expect(s.logger.lines).toContainEqual({
      level: 'warn',
      fields: {
        id: confirmed.id,
        route: 'GET /paid',
        action: 'confirmed-on-chain',
        from: 'uncertain',
        note: `transfer ${TEST_TX}`,
      },
      message: 'ledger reconciler resolved an entry',
    });
    expect(s.seen.filter((e) => e.hook === 'onTransfer').map((e) => e.args)).toEqual([
      [
        {
          id: 'confirmed',
          route: 'GET /paid',
          network: NETWORK,
          payer: TEST_PAYER,
          transaction: TEST_TX,
          via: 'reconciler',
        },
      ],
    ]);
    expect(
      s.seen
        .filter((e) => e.hook === 'onResolved')
        .map((e) => (e.args[1] as { action: string }).action)
        .sort(),
    ).toEqual(['confirmed-on-chain', 'expired-unused', 'unresolved']);
    s.clock.now += 5;
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 0 });
    expect(s.reconciler.stats()).toMatchObject({ examined: 5, released: 2, rounds: 2, lastRoundAt: NOW + 5 });
  });

  it('marks a dead settling entry uncertain, reports it abandoned, and judges it in the same round', async () => {
    const s = setup();
    const settling = await s.entry({ state: 'settling' });
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 1, abandoned: 1, unresolved: 1 });
    const [abandoned] = s.seen.filter((e) => e.hook === 'onResolved');
    expect(abandoned?.args).toEqual([
      settling && expect.objectContaining({ id: settling.id }),
      {
        by: 'reconciler',
        instance: 'alpha',
        at: NOW,
        from: 'settling',
        action: 'abandoned',
        attempts: 0,
        note: 'owner dead:r stopped renewing its lease',
      },
    ]);
    expect((await s.store.get(settling.id))?.resolution).toMatchObject({
      from: 'settling',
      action: 'unresolved',
      attempts: 1,
    });
  });

  it('judges an entry again from the state it was first found in', async () => {
    const s = setup();
    const earlier = await s.entry({
      resolution: {
        by: 'reconciler',
        instance: 'alpha',
        at: 1,
        from: 'settling',
        action: 'unresolved',
        attempts: 2,
      },
    });
    await s.reconciler.runOnce();
    expect((await s.store.get(earlier.id))?.resolution).toMatchObject({ from: 'settling', attempts: 3 });
  });

  it('holds an entry it looks at again later as its own (owner <instance>:reconciler)', async () => {
    const s = setup();
    const e = await s.entry();
    await s.reconciler.runOnce();
    expect((await s.store.get(e.id))?.owner).toBe('alpha:reconciler');
  });

  it('says no scheme serves an entry whose requirements it cannot read, and looks again later', async () => {
    const s = setup();
    const odd = await s.entry({ requirements: { scheme: 'upto', network: NETWORK, amount: '1' } });
    expect(await s.reconciler.runOnce()).toMatchObject({ unresolved: 1 });
    expect((await s.store.get(odd.id))?.resolution?.note).toBe(
      'no scheme serves the requirements of GET /paid',
    );
  });

  it('waits twice as long after each unresolved attempt, from the interval (at least 1 s) up to maxBackoffMs', async () => {
    const waits = async (options: Partial<LedgerReconcilerOptions>, attempts: number) => {
      const s = setup(options);
      const e = await s.entry({
        resolution: {
          by: 'reconciler',
          instance: 'alpha',
          at: 1,
          from: 'uncertain',
          action: 'unresolved',
          attempts: attempts - 1,
        },
      });
      await s.reconciler.runOnce();
      return (await s.store.get(e.id))!.leaseUntil - NOW;
    };
    expect(await waits({ intervalMs: 0 }, 1)).toBe(1_000);
    expect(await waits({ intervalMs: 0 }, 3)).toBe(4_000);
    expect(await waits({ intervalMs: 2_000 }, 2)).toBe(4_000);
    expect(await waits({ intervalMs: 0 }, 10)).toBe(60_000);
    expect(await waits({ intervalMs: 0, maxBackoffMs: 5_000 }, 4)).toBe(5_000);
    expect(await waits({ intervalMs: 0, maxBackoffMs: 10 ** 12 }, 30)).toBe(1_000 * 2 ** 16);
  });

  it('looks at no more than batch entries per round', async () => {
    const s = setup({ batch: 2 });
    for (let i = 0; i < 3; i++) await s.entry({ state: 'claimed' });
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 2, released: 2 });
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 1, released: 1 });
  });

  it('looks at 100 entries per round by default', async () => {
    const s = setup();
    for (let i = 0; i < 101; i++) await s.entry({ state: 'claimed' });
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 100 });
  });

  it('leaves alone an entry whose lease this instance renews', async () => {
    const s = setup();
    const held = await s.entry({ state: 'claimed', owner: 'alpha:r-1', updatedAt: NOW + 1 });
    s.ledger.leases.hold(held, 'claimed');
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 0 });
    s.ledger.leases.stop();
  });

  it('counts as skipped an entry another process changed first', async () => {
    const s = setup();
    const claimed = await s.entry({ state: 'claimed' });
    const remove = s.store.remove.bind(s.store);
    s.store.remove = async (id, expected) => {
      await s.store.update(
        id,
        { state: ['claimed'], owner: 'dead:r' },
        { state: 'claimed', owner: 'beta:r' },
      );
      return remove(id, expected);
    };
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 1, released: 0, skipped: 1 });
    expect((await s.store.get(claimed.id))?.owner).toBe('beta:r');
  });

  it.each(['settling', 'uncertain'] as const)(
    'counts as skipped a %s entry it could not take over',
    async (state) => {
      const s = setup();
      await s.entry({ state });
      s.store.update = async () => undefined;
      expect(await s.reconciler.runOnce()).toMatchObject({
        examined: 1,
        abandoned: 0,
        unresolved: 0,
        skipped: 1,
      });
    },
  );

  it('counts as skipped an entry whose verdict could not be recorded', async () => {
    const s = setup();
    await s.entry();
    const update = s.store.update.bind(s.store);
    s.store.update = async (id, expected, patch) =>
      patch.resolution ? undefined : update(id, expected, patch);
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 1, unresolved: 0, skipped: 1 });
    expect(s.seen).toEqual([]);
  });

  it('counts as skipped, and logs, an entry it failed on, and goes on with the next', async () => {
    const s = setup();
    const failing = await s.entry({ state: 'claimed' });
    await s.entry({ state: 'claimed' });
    const down = new Error('remove failed');
    const remove = s.store.remove.bind(s.store);
    s.store.remove = async (id, expected) => {
      if (id === failing.id) throw down;
      return remove(id, expected);
    };
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 2, released: 1, skipped: 1 });
    expect(s.logger.lines).toContainEqual({
      level: 'warn',
      fields: { err: down, id: failing.id },
      message: 'ledger reconciler could not resolve an entry',
    });
  });

  it('logs and ignores hooks that throw', async () => {
    const s = setup({
      hooks: {
        onTransfer: () => {
          throw new Error('transfer hook');
        },
        onResolved: () => {
          throw new Error('resolved hook');
        },
      },
    });
    await s.entry();
    s.scheme.reconcileAnswer = {
      status: 'settled',
      receipt: { success: true, transaction: TEST_TX, network: NETWORK },
    };
    expect(await s.reconciler.runOnce()).toMatchObject({ confirmed: 1 });
    expect(
      s.logger.lines
        .filter((l) => l.message === 'gate hook failed')
        .map((l) => (l.fields.err as Error).message),
    ).toEqual(['transfer hook', 'resolved hook']);
  });

  it('works without a logger or hooks', async () => {
    const s = setup({ logger: undefined, hooks: undefined });
    await s.entry({ state: 'claimed' });
    await s.entry({ state: 'settling' });
    s.scheme.reconcileAnswer = {
      status: 'settled',
      receipt: { success: true, transaction: TEST_TX, network: NETWORK },
    };
    expect(await s.reconciler.runOnce()).toMatchObject({ released: 1, abandoned: 1, confirmed: 1 });
  });
});

describe('the first round', () => {
  it("resumes this instance's entries from before it started, whatever their lease, and only then", async () => {
    const s = setup();
    const own = await s.entry({ state: 'claimed', owner: 'alpha:r-1', leaseUntil: NOW + 60_000 });
    await s.entry({ state: 'claimed', owner: 'alpha:r-2', leaseUntil: NOW + 60_000, updatedAt: NOW });
    await s.entry({ state: 'claimed', owner: 'alphabet:r-3', leaseUntil: NOW + 60_000 });
    await s.entry({ state: 'settled', owner: 'alpha:r-5', leaseUntil: NOW + 60_000 });
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 1, released: 1 });
    expect(await s.store.get(own.id)).toBeUndefined();
    await s.entry({ state: 'claimed', owner: 'alpha:r-4', leaseUntil: NOW + 60_000 });
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 0 });
  });

  it('looks at an entry found by both of its queries once', async () => {
    const s = setup();
    await s.entry({ state: 'claimed', owner: 'alpha:r-1' });
    expect(await s.reconciler.runOnce()).toMatchObject({ examined: 1, released: 1, skipped: 0 });
  });
});

describe('runOnce and stats', () => {
  it('runs one round at a time: a call during a round gets that round', async () => {
    const s = setup();
    await s.entry({ state: 'claimed' });
    const [a, b] = [s.reconciler.runOnce(), s.reconciler.runOnce()];
    expect(a).toBe(b);
    await a;
    expect(s.reconciler.stats().rounds).toBe(1);
    expect(s.reconciler.runOnce()).not.toBe(a);
  });

  it('records the message of a round that failed as a whole, until a round succeeds', async () => {
    const s = setup();
    const query = s.store.query.bind(s.store);
    s.store.query = async () => {
      throw new Error('store down');
    };
    await expect(s.reconciler.runOnce()).rejects.toThrow('store down');
    expect(s.reconciler.stats()).toMatchObject({ rounds: 0, lastRoundAt: 0, lastError: 'store down' });
    s.store.query = async () => {
      throw 'odd';
    };
    await expect(s.reconciler.runOnce()).rejects.toBe('odd');
    expect(s.reconciler.stats().lastError).toBe('odd');
    s.store.query = query;
    await s.reconciler.runOnce();
    expect(s.reconciler.stats()).not.toHaveProperty('lastError');
    expect(s.reconciler.stats().rounds).toBe(1);
  });

  it('gives a copy of its totals', async () => {
    const s = setup();
    const stats = s.reconciler.stats();
    stats.rounds = 99;
    expect(s.reconciler.stats().rounds).toBe(0);
  });
});

describe('the timer', () => {
  it('runs a round every intervalMs once started, logs a failed round, and stops', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const s = setup({ intervalMs: 1_000 });
    let queries = 0;
    s.store.query = async () => {
      queries++;
      throw new Error('store down');
    };
    s.reconciler.start();
    s.reconciler.start();
    await vi.advanceTimersByTimeAsync(999);
    expect(queries).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(queries).toBe(1);
    expect(s.logger.lines).toContainEqual({
      level: 'warn',
      fields: { err: expect.objectContaining({ message: 'store down' }) },
      message: 'ledger reconciler round failed',
    });
    s.reconciler.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(queries).toBe(1);
    s.reconciler.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queries).toBe(2);
    s.reconciler.stop();
  });

  it('never starts with an interval of 0', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const s = setup({ intervalMs: 0 });
    let queries = 0;
    s.store.query = async () => {
      queries++;
      return [];
    };
    s.reconciler.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(queries).toBe(0);
  });

  it('does not keep the process alive', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const s = setup({ intervalMs: 1_000 });
    const setInterval = vi.spyOn(globalThis, 'setInterval');
    s.reconciler.start();
    const timer = setInterval.mock.results[0]!.value as { hasRef(): boolean };
    expect(timer.hasRef()).toBe(false);
    s.reconciler.stop();
  });
});
