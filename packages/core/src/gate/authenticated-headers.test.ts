// The replay shortcut (authenticated-headers.ts, docs/ledger.md "What a retry gets"): a retry in
// exactly the same header bytes as a payment this process authenticated skips decoding and
// signature recovery; once its settled answer was read it is kept in process (bodies up to 8 KiB,
// at most 4,096 headers).
import { describe, expect, it } from 'vitest';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { SettlementLedger } from '../ledger/settlement-ledger';
import type { LedgerEntry, LedgerStore } from '../ledger/types';
import { compileRoutes } from '../routes/compile-routes';
import type { RouteMatch } from '../routes/types';
import { ACCEPTS, BASE, createGateHarness } from '../test-support/gate-harness';
import { createSimpleScheme } from '../test-support/simple-scheme';
import { AuthenticatedHeaders, fingerprintOf } from './authenticated-headers';

const NOW = 1_800_000_000_000;

/** The shortcut over a memory ledger, counting the store reads a lookup makes. */
function shortcut() {
  const store: LedgerStore = createMemoryLedgerStore({ purgeIntervalMs: 0 });
  const clock = { now: NOW };
  const ledger = new SettlementLedger({
    store,
    instanceId: 'alpha',
    leaseMs: 10_000,
    retentionMs: 60_000,
    now: () => clock.now,
  });
  let reads = 0;
  const get = store.get.bind(store);
  store.get = (id) => {
    reads++;
    return get(id);
  };
  const headers = new AuthenticatedHeaders(ledger, () => clock.now);
  const table = compileRoutes(
    { 'GET /paid': { accepts: ACCEPTS }, 'GET /other': { accepts: ACCEPTS } },
    { schemes: [createSimpleScheme()], baseUrl: BASE },
  );
  const match = (path = '/paid'): RouteMatch => table.match('GET', `${BASE}${path}`)!;
  /** A settled entry with an answer of `bytes` bytes, valid until NOW + 60 s. */
  async function settled(
    id: string,
    bytes = 10,
    state: LedgerEntry['state'] = 'settled',
  ): Promise<LedgerEntry> {
    const entry: LedgerEntry = {
      ...ledger.newEntry({
        id,
        owner: 'alpha:r',
        resource: `${BASE}/paid`,
        route: 'GET /paid',
        network: ACCEPTS.network,
        payer: '0x1',
        payload: {},
        requirements: { maxTimeoutSeconds: 60 },
        validBefore: NOW / 1000 + 60,
      }),
      state,
      ...(state === 'settled'
        ? { response: { status: 200, headers: { a: 'b' }, body: Buffer.alloc(bytes, 1) } }
        : {}),
    };
    await store.claim(entry);
    return entry;
  }
  return { headers, store, clock, match, settled, reads: () => reads };
}

describe('fingerprintOf', () => {
  it('gives one text one key, and two texts of one length that differ in a sampled character two keys', () => {
    const text = 'x'.repeat(640);
    expect(fingerprintOf(text)).toBe(fingerprintOf(`${text}`));
    expect(fingerprintOf(text)).not.toBe(fingerprintOf(`y${text.slice(1)}`));
    expect(fingerprintOf('ab')).not.toBe(fingerprintOf('ba'));
    expect(fingerprintOf('ab')).not.toBe(fingerprintOf('abc'));
    expect(Number.isInteger(fingerprintOf(text)) && fingerprintOf(text) >= 0).toBe(true);
  });
});

describe('AuthenticatedHeaders', () => {
  it('answers nothing for a text it was not told of, or another text under the same key', async () => {
    const s = shortcut();
    await s.settled('id-1');
    expect(await s.headers.replayOf(1, 'header', s.match())).toBeUndefined();
    s.headers.remember(1, 'header', 'id-1');
    expect(await s.headers.replayOf(1, 'other header', s.match())).toBeUndefined();
    expect(s.reads()).toBe(0);
  });

  it('replays a settled answer read once, then from memory, until the end of its window', async () => {
    const s = shortcut();
    const entry = await s.settled('id-1');
    s.headers.remember(7, 'header', 'id-1');
    for (let i = 0; i < 3; i++) {
      const replay = await s.headers.replayOf(7, 'header', s.match());
      expect(replay).toMatchObject({ kind: 'replay', entry: { id: 'id-1' } });
      expect(Buffer.from((replay as { response: { body: Uint8Array } }).response.body)).toEqual(
        Buffer.from(entry.response!.body),
      );
    }
    expect(s.reads()).toBe(1);
    s.clock.now = NOW + 60_000 - 1;
    expect(await s.headers.replayOf(7, 'header', s.match())).toMatchObject({ kind: 'replay' });
    s.clock.now = NOW + 60_000;
    expect(await s.headers.replayOf(7, 'header', s.match())).toBeUndefined();
  });

  it('keeps a kept answer from being changed by whoever sends it', async () => {
    const s = shortcut();
    await s.settled('id-1');
    s.headers.remember(7, 'header', 'id-1');
    const replay = (await s.headers.replayOf(7, 'header', s.match())) as {
      response: { headers: Record<string, string> };
    };
    expect(() => {
      replay.response.headers.a = 'changed';
    }).toThrow(TypeError);
  });

  it('answers nothing for another resource, from the ledger or from memory', async () => {
    const s = shortcut();
    await s.settled('id-1');
    s.headers.remember(7, 'header', 'id-1');
    expect(await s.headers.replayOf(7, 'header', s.match('/other'))).toBeUndefined();
    expect(await s.headers.replayOf(7, 'header', s.match())).toMatchObject({ kind: 'replay' });
    expect(await s.headers.replayOf(7, 'header', s.match('/other'))).toBeUndefined();
  });

  it('answers nothing from the ledger past the window, for an entry not settled, or when the store fails', async () => {
    const s = shortcut();
    await s.settled('id-1');
    await s.settled('id-2', 10, 'uncertain');
    s.headers.remember(1, 'one', 'id-1');
    s.headers.remember(2, 'two', 'id-2');
    s.clock.now = NOW + 60_000;
    expect(await s.headers.replayOf(1, 'one', s.match())).toBeUndefined();
    s.clock.now = NOW;
    expect(await s.headers.replayOf(2, 'two', s.match())).toBeUndefined();
    s.store.get = async () => {
      throw new Error('down');
    };
    expect(await s.headers.replayOf(1, 'one', s.match())).toBeUndefined();
  });

  it('keeps answers of up to 8 KiB in memory, and reads longer ones from the ledger each time', async () => {
    const s = shortcut();
    await s.settled('small', 8 * 1024);
    await s.settled('large', 8 * 1024 + 1);
    s.headers.remember(1, 'small', 'small');
    s.headers.remember(2, 'large', 'large');
    for (let i = 0; i < 3; i++) {
      expect(await s.headers.replayOf(1, 'small', s.match())).toMatchObject({ kind: 'replay' });
      expect(await s.headers.replayOf(2, 'large', s.match())).toMatchObject({ kind: 'replay' });
    }
    expect(s.reads()).toBe(1 + 3);
  });

  it('remembers 4,096 headers and forgets the oldest for the next', async () => {
    const s = shortcut();
    await s.settled('id');
    for (let key = 0; key < 4_096; key++) s.headers.remember(key, `h${key}`, 'id');
    expect(await s.headers.replayOf(0, 'h0', s.match())).toMatchObject({ kind: 'replay' });
    s.headers.remember(4_096, 'h4096', 'id');
    expect(await s.headers.replayOf(0, 'h0', s.match())).toBeUndefined();
    expect(await s.headers.replayOf(1, 'h1', s.match())).toMatchObject({ kind: 'replay' });
    expect(await s.headers.replayOf(4_096, 'h4096', s.match())).toMatchObject({ kind: 'replay' });
  });
});

describe('the shortcut in the gate', () => {
  it('keeps the shortcut of each of two payments settled one after the other', async () => {
    const h = createGateHarness();
    const [a, b] = [h.payment(), h.payment()];
    await h.run(h.pay(a));
    await h.run(h.pay(b));
    let checks = 0;
    const preVerify = h.scheme.preVerify;
    h.scheme.preVerify = (...args) => {
      checks++;
      return preVerify(...args);
    };
    expect((await h.gate.handle(h.pay(a))).kind).toBe('replay');
    expect((await h.gate.handle(h.pay(b))).kind).toBe('replay');
    expect(checks).toBe(0);
  });
});
