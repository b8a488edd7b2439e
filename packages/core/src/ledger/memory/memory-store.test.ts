import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LedgerEntry, LedgerStore } from '../types';
import { createMemoryLedgerStore, MEMORY_LEDGER_STORE_DEFAULTS } from './memory-store';

function buildEntry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  const now = 1_700_000_000_000;
  return {
    id: 'eip155:84532:0xasset:0xpayer:0x01',
    state: 'claimed',
    resource: 'https://api.example/fees',
    route: 'GET /fees',
    network: 'eip155:84532',
    payer: '0xpayer',
    payload: { signature: '0xsig', authorization: { nonce: '0x01' } },
    requirements: { scheme: 'exact', amount: '1000' },
    validBefore: now / 1000 + 600,
    owner: 'instance-a:req-1',
    leaseUntil: now + 30_000,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + 3_600_000,
    ...overrides,
  };
}

describe('createMemoryLedgerStore', () => {
  let store: LedgerStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    vi.useRealTimers();
  });

  it('exports frozen defaults with an automatic purge every minute', () => {
    expect(MEMORY_LEDGER_STORE_DEFAULTS.purgeIntervalMs).toBe(60_000);
    expect(Object.isFrozen(MEMORY_LEDGER_STORE_DEFAULTS)).toBe(true);
  });

  it('reports every invalid option at once', () => {
    expect(() =>
      createMemoryLedgerStore({ purgeIntervalMs: -1, now: 'soon' as unknown as () => number }),
    ).toThrow(/purgeIntervalMs.*now must be a function/);
  });

  it('never hands out its internal objects', async () => {
    store = createMemoryLedgerStore();
    const entry = buildEntry({
      response: { status: 200, headers: { a: 'b' }, body: new Uint8Array([1, 2]) },
    });
    const claimed = await store.claim(entry);
    (entry.payload as { signature: string }).signature = 'mutated-input';
    claimed.entry.state = 'settled';
    claimed.entry.response!.body[0] = 99;
    const got = await store.get(entry.id);
    expect(got?.state).toBe('claimed');
    expect((got!.payload as { signature: string }).signature).toBe('0xsig');
    expect([...got!.response!.body]).toEqual([1, 2]);
    got!.owner = 'someone-else';
    const listed = await store.query({});
    listed[0]!.requirements = null;
    const again = await store.get(entry.id);
    expect(again?.owner).toBe('instance-a:req-1');
    expect(again?.requirements).toEqual({ scheme: 'exact', amount: '1000' });
  });

  it.each([
    [{ purgeIntervalMs: -1 }, 'purgeIntervalMs must be a non-negative integer (got -1)'],
    [{ purgeIntervalMs: 1.5 }, 'purgeIntervalMs must be a non-negative integer (got 1.5)'],
    [{ purgeIntervalMs: Number.NaN }, 'purgeIntervalMs must be a non-negative integer (got NaN)'],
    [{ purgeIntervalMs: 2 ** 53 }, 'purgeIntervalMs must be a non-negative integer (got 9007199254740992)'],
    [{ now: 5 as unknown as () => number }, 'now must be a function returning epoch ms'],
    [
      { purgeIntervalMs: -2, now: null as unknown as () => number },
      'purgeIntervalMs must be a non-negative integer (got -2); now must be a function returning epoch ms',
    ],
  ])('refuses %o as invalid_config, saying why', (options, problems) => {
    let thrown: unknown;
    try {
      createMemoryLedgerStore(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: 'invalid_config',
      message: `Invalid memory ledger store options: ${problems}`,
    });
  });

  it('takes options given as undefined as their defaults', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    store = createMemoryLedgerStore({ purgeIntervalMs: undefined, now: undefined });
    expect(vi.getTimerCount()).toBe(1);
    await store.claim(buildEntry({ id: 'gone', expiresAt: 1_000_500 }));
    const updated = await store.update('gone', { state: ['claimed'] }, { state: 'verified' });
    expect(updated?.updatedAt).toBe(1_000_000);
    vi.advanceTimersByTime(59_999);
    expect(await store.get('gone')).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(await store.get('gone')).toBeUndefined();
  });

  it('runs no purge timer when purgeIntervalMs is 0, and stops its timer when closed', async () => {
    vi.useFakeTimers();
    const off = createMemoryLedgerStore({ purgeIntervalMs: 0, now: () => 10_000 });
    expect(vi.getTimerCount()).toBe(0);
    await off.claim(buildEntry({ id: 'kept', expiresAt: 5 }));
    vi.advanceTimersByTime(3_600_000);
    expect(await off.get('kept')).toBeDefined();
    expect(await off.purgeExpired(10_000)).toBe(1);
    await off.close();
    store = createMemoryLedgerStore({ purgeIntervalMs: 1 });
    expect(vi.getTimerCount()).toBe(1);
    await store.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never keeps the process alive with its purge timer', () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    store = createMemoryLedgerStore({ purgeIntervalMs: 1_000 });
    expect(timers()).toBe(before);
  });

  it('counts the bindings it purges with the entries', async () => {
    store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    await store.claim(buildEntry({ id: 'old', expiresAt: 100 }));
    const binding = { key: 'k', fingerprint: 'f', entry: 'old', createdAt: 1, expiresAt: 100 };
    await store.bindIdentifier(binding);
    await store.bindIdentifier({ ...binding, key: 'fresh', expiresAt: 300 });
    await store.bindIdentifier({ ...binding, key: 'due', expiresAt: 200 });
    expect(await store.purgeExpired(200)).toBe(2);
    expect(await store.getIdentifier('k')).toBeUndefined();
    expect(await store.getIdentifier('fresh')).toBeDefined();
    // Expiring at the purge time itself: not before it, so kept.
    expect(await store.getIdentifier('due')).toBeDefined();
  });

  it('hands out copies of bindings', async () => {
    store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const binding = { key: 'k', fingerprint: 'f', entry: 'e', createdAt: 1, expiresAt: 100 };
    const bound = await store.bindIdentifier(binding);
    bound.binding.entry = 'changed';
    binding.fingerprint = 'changed';
    const got = await store.getIdentifier('k');
    expect(got).toStrictEqual({
      key: 'k',
      fingerprint: 'f',
      entry: 'e',
      version: 1,
      createdAt: 1,
      expiresAt: 100,
    });
    got!.entry = 'changed';
    const again = await store.bindIdentifier({ ...binding, entry: 'other' });
    expect(again.binding.entry).toBe('e');
    again.binding.entry = 'changed';
    expect((await store.getIdentifier('k'))?.entry).toBe('e');
  });

  it('sets updatedAt from its clock on every update and ignores patched ids and timestamps', async () => {
    let clock = 5_000;
    store = createMemoryLedgerStore({ now: () => clock });
    const entry = buildEntry();
    await store.claim(entry);
    clock = 6_000;
    const patch = { state: 'verified', id: 'other', createdAt: 1, updatedAt: 2 } as never;
    const updated = await store.update(entry.id, { state: ['claimed'] }, patch);
    expect(updated?.id).toBe(entry.id);
    expect(updated?.createdAt).toBe(entry.createdAt);
    expect(updated?.updatedAt).toBe(6_000);
    expect(await store.get('other')).toBeUndefined();
  });

  it('purges expired entries on its own timer', async () => {
    vi.useFakeTimers();
    let clock = 0;
    store = createMemoryLedgerStore({ purgeIntervalMs: 1_000, now: () => clock });
    await store.claim(buildEntry({ id: 'a', expiresAt: 500 }));
    await store.claim(buildEntry({ id: 'b', expiresAt: 5_000 }));
    clock = 1_000;
    vi.advanceTimersByTime(1_000);
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('b')).toBeDefined();
  });

  it('finds entries by id, transaction and state among 20 000 entries', async () => {
    store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    for (let i = 0; i < 20_000; i += 1) {
      await store.claim(buildEntry({ id: `id-${i}`, transaction: i % 2 === 0 ? `0xtx${i}` : undefined }));
    }
    expect((await store.query({ transaction: '0xtx19998' }))[0]?.id).toBe('id-19998');
    expect((await store.claim(buildEntry({ id: 'id-7' }))).acquired).toBe(false);
    const newest = await store.query({ state: 'claimed', limit: 3 });
    expect(newest.map((e) => e.id)).toEqual(['id-9999', 'id-9998', 'id-9997']);
  });

  it('rejects every operation once closed', async () => {
    store = createMemoryLedgerStore();
    await store.close();
    await expect(store.get('x')).rejects.toMatchObject({ code: 'ledger_unavailable' });
    await expect(store.claim(buildEntry())).rejects.toMatchObject({ code: 'ledger_unavailable' });
  });

  describe('sharing frozen payloads and requirements', () => {
    // JSON values with byte arrays inside (which cannot be frozen, so their parents stay copied).
    const key = fc.string({ maxLength: 4 }).filter((k) => k !== '__proto__');
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null)),
        fc.uint8Array({ maxLength: 4 }),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(key, tie('value'), { maxKeys: 3 }),
      ),
    }));

    /** Tries to change every reachable part of `root`; frozen parts refuse (and throw in strict mode). */
    function scramble(root: unknown): void {
      const visit = (v: unknown): void => {
        if (v === null || typeof v !== 'object') return;
        if (v instanceof Uint8Array) {
          v.fill(7);
          return;
        }
        for (const k of Object.keys(v)) {
          visit((v as Record<string, unknown>)[k]);
          try {
            (v as Record<string, unknown>)[k] = 'scrambled';
          } catch {
            // frozen: cannot change, which is the point
          }
        }
        if (Array.isArray(v)) {
          try {
            v.push('scrambled');
          } catch {
            // frozen
          }
        }
      };
      visit(root);
    }

    it('hands out entries equal to what was stored, however the caller mutates inputs and outputs', async () => {
      await fc.assert(
        fc.asyncProperty(
          value,
          value,
          value,
          value,
          fc.uint8Array({ maxLength: 8 }),
          async (...generated) => {
            // Private copies: the test scrambles what it passes in, and fast-check keeps its own values.
            const [p, r, receipt, p2, body] = structuredClone(generated);
            const s = createMemoryLedgerStore({ purgeIntervalMs: 0, now: () => 42 });
            try {
              const entry = buildEntry({
                payload: p,
                requirements: r,
                receipt: structuredClone(receipt),
                response: { status: 402, headers: { b: 'c' }, body: body.slice() },
              });
              const model = structuredClone(entry);
              const claimed = await s.claim(entry);
              expect(claimed.entry).toStrictEqual(model);
              scramble(entry);
              scramble(claimed.entry);
              expect(await s.get(model.id)).toStrictEqual(model);

              const patch = {
                state: 'settled' as const,
                receipt,
                payload: p2,
                response: { status: 200, headers: { a: 'b' }, body },
              };
              const expected = { ...model, ...structuredClone(patch), updatedAt: 42 };
              const updated = await s.update(model.id, { state: ['claimed'] }, patch);
              expect(updated).toStrictEqual(expected);
              scramble(patch);
              scramble(updated);
              const got = await s.get(model.id);
              expect(got).toStrictEqual(expected);
              scramble(got);
              const listed = await s.query({});
              expect(listed).toStrictEqual([expected]);
              scramble(listed);
              expect(await s.get(model.id)).toStrictEqual(expected);
            } finally {
              await s.close();
            }
          },
        ),
        // No shrinking: a counterexample is small enough as found, and shrinking nested values is slow.
        { numRuns: 300, endOnFailure: true },
      );
    });

    it('shares a frozen payload and requirements; copies everything else as before', async () => {
      store = createMemoryLedgerStore();
      const entry = buildEntry({
        payload: { signature: '0xsig', list: [1, { a: 1 }] },
        receipt: { success: true },
        response: { status: 200, headers: { a: 'b' }, body: new Uint8Array([1, 2]) },
      });
      const claimed = await store.claim(entry);
      expect(Object.isFrozen(entry.payload)).toBe(false);
      const got = await store.get(entry.id);
      expect(got!.payload).toBe(claimed.entry.payload);
      const payload = got!.payload as { list: [number, { a: number }] };
      expect(Object.isFrozen(payload.list[1])).toBe(true);
      expect(Object.isFrozen(got!.requirements)).toBe(true);
      for (const part of [got, got!.receipt, got!.response, got!.response!.headers]) {
        expect(Object.isFrozen(part)).toBe(false);
      }
      expect(got!.receipt).not.toBe(claimed.entry.receipt);
      expect(() => {
        (got!.requirements as { amount: string }).amount = '1';
      }).toThrow(TypeError);
    });

    it('keeps an object that is no plain object (a Date) as it is, copied for each caller', async () => {
      store = createMemoryLedgerStore();
      const entry = buildEntry({ payload: { signedAt: new Date(1_700_000_000_000), plain: { a: 1 } } });
      await store.claim(entry);
      const got = await store.get(entry.id);
      const payload = got!.payload as { signedAt: Date; plain: { a: number } };
      expect(payload.signedAt).toBeInstanceOf(Date);
      expect(payload.signedAt.getTime()).toBe(1_700_000_000_000);
      expect(Object.isFrozen(payload)).toBe(false);
      payload.signedAt.setTime(0);
      const again = await store.get(entry.id);
      expect((again!.payload as { signedAt: Date }).signedAt.getTime()).toBe(1_700_000_000_000);
    });

    it('freezes and shares a payload holding objects without a prototype', async () => {
      store = createMemoryLedgerStore();
      const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
      const entry = buildEntry({ payload: { bare } });
      const claimed = await store.claim(entry);
      const got = await store.get(entry.id);
      expect(got!.payload).toBe(claimed.entry.payload);
      expect(Object.isFrozen(got!.payload)).toBe(true);
      expect((got!.payload as { bare: { a: number } }).bare).toStrictEqual({ a: 1 });
    });

    it('keeps an own __proto__ key of a parsed payload as a key, never as the prototype', async () => {
      store = createMemoryLedgerStore();
      const text = '{"a":1,"__proto__":{"evil":true},"inner":{"__proto__":[2]}}';
      const receipt = JSON.parse(text) as LedgerEntry['receipt'];
      // Sealed (frozen, shared) and copied per caller: the payload and a field copied on each read.
      for (const payload of [JSON.parse(text), { ...JSON.parse(text), bytes: new Uint8Array([1]) }]) {
        const entry = buildEntry({ id: `proto-${Object.keys(payload).length}`, payload, receipt });
        await store.claim(entry);
        const got = (await store.get(entry.id))!;
        for (const part of [got.payload, got.receipt] as Array<Record<string, unknown>>) {
          expect(Object.getPrototypeOf(part)).toBe(Object.prototype);
          expect(Object.keys(part).slice(0, 3)).toEqual(['a', '__proto__', 'inner']);
          expect((part as { evil?: unknown }).evil).toBeUndefined();
          expect(Object.getOwnPropertyDescriptor(part, '__proto__')?.value).toEqual({ evil: true });
          const inner = part['inner'] as Record<string, unknown>;
          expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
          expect(Object.getOwnPropertyDescriptor(inner, '__proto__')?.value).toEqual([2]);
        }
        expect(JSON.stringify(got.payload)).toBe(JSON.stringify(payload));
      }
    });

    it('copies a payload holding bytes for each caller instead of sharing it', async () => {
      store = createMemoryLedgerStore();
      const entry = buildEntry({ payload: { nested: { bytes: new Uint8Array([1]) }, plain: { a: 1 } } });
      const claimed = await store.claim(entry);
      const payload = claimed.entry.payload as { nested: { bytes: Uint8Array }; plain: { a: number } };
      expect(Object.isFrozen(payload)).toBe(false);
      payload.nested.bytes[0] = 9;
      payload.plain.a = 2;
      const got = await store.get(entry.id);
      expect(got!.payload).toStrictEqual({ nested: { bytes: new Uint8Array([1]) }, plain: { a: 1 } });
      expect(got!.payload).not.toBe(claimed.entry.payload);
    });
  });
});
