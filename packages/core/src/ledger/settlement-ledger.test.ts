import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedgerStore } from './memory/index';
import { type NewEntryInput, SettlementLedger } from './settlement-ledger';
import type { LedgerEntry, LedgerResolution, LedgerState, LedgerStore } from './types';

const LEASE = 9_000;
const RETENTION = 86_400_000;
const START = 1_700_000_000_000;

// Ledgers and stores are built inside each test (never at import): mutation testing activates a
// mutant after the file was imported, so anything built at module level is unmutated.
let stores: LedgerStore[] = [];
let ledgers: SettlementLedger[] = [];
afterEach(async () => {
  for (const ledger of ledgers) ledger.leases.stop();
  await Promise.all(stores.map((store) => store.close()));
  stores = [];
  ledgers = [];
});

function setup(overrides: { instanceId?: string; onLeaseError?: (error: unknown, id: string) => void } = {}) {
  const clock = { now: START };
  const store = createMemoryLedgerStore({ purgeIntervalMs: 0, now: () => clock.now });
  stores.push(store);
  const ledger = new SettlementLedger({
    store,
    instanceId: overrides.instanceId ?? 'inst-a',
    leaseMs: LEASE,
    retentionMs: RETENTION,
    now: () => clock.now,
    ...(overrides.onLeaseError ? { onLeaseError: overrides.onLeaseError } : {}),
  });
  ledgers.push(ledger);
  return { clock, store, ledger };
}

let sequence = 0;
function input(overrides: Partial<NewEntryInput> = {}): NewEntryInput {
  sequence += 1;
  return {
    id: `eip155:8453:0xasset:0xpayer:0x${sequence.toString(16)}`,
    owner: 'inst-a:req-1',
    resource: 'https://api.example/paid',
    route: 'GET /paid',
    network: 'eip155:8453',
    payer: '0xpayer',
    payload: { signature: '0xsig' },
    requirements: { scheme: 'exact', maxTimeoutSeconds: 60 },
    validBefore: START / 1000 + 600,
    ...overrides,
  };
}

const resolution: LedgerResolution = {
  by: 'reconciler',
  instance: 'inst-b',
  at: START,
  from: 'settling',
  action: 'abandoned',
  attempts: 1,
};

async function claimed(
  ledger: SettlementLedger,
  state: LedgerState = 'claimed',
  overrides: Partial<NewEntryInput> = {},
): Promise<LedgerEntry> {
  const entry = { ...ledger.newEntry(input(overrides)), state };
  expect((await ledger.claim(entry)).acquired).toBe(true);
  return entry;
}

describe('SettlementLedger', () => {
  it('names owners after its instance and tells its own instance from one whose id only starts the same', () => {
    const { ledger } = setup({ instanceId: 'inst-a' });
    expect(ledger.instanceId).toBe('inst-a');
    expect(ledger.leaseMs).toBe(LEASE);
    expect(ledger.owner('req-7')).toBe('inst-a:req-7');
    expect(ledger.isOwnInstance({ owner: 'inst-a:req-7' })).toBe(true);
    expect(ledger.isOwnInstance({ owner: 'inst-a-2:req-7' })).toBe(false);
    expect(ledger.isOwnInstance({ owner: 'inst-b:req-7' })).toBe(false);
    expect(ledger.isOwnInstance({ owner: 'x:inst-a:req-7' })).toBe(false);
  });

  it('reads its clock and gives a lease that ends leaseMs from now', () => {
    const { clock, ledger } = setup();
    clock.now = START + 123;
    expect(ledger.now()).toBe(START + 123);
    expect(ledger.leaseUntil()).toBe(START + 123 + LEASE);
  });

  it('builds a claimed entry leased from now that expires retentionMs after validBefore', () => {
    const { clock, ledger } = setup();
    clock.now = START + 5;
    const given = input({ validBefore: 1_700_000_600 });
    expect(ledger.newEntry(given)).toStrictEqual({
      id: given.id,
      state: 'claimed',
      resource: 'https://api.example/paid',
      route: 'GET /paid',
      network: 'eip155:8453',
      payer: '0xpayer',
      payload: { signature: '0xsig' },
      requirements: { scheme: 'exact', maxTimeoutSeconds: 60 },
      validBefore: 1_700_000_600,
      owner: 'inst-a:req-1',
      leaseUntil: START + 5 + LEASE,
      createdAt: START + 5,
      updatedAt: START + 5,
      expiresAt: 1_700_000_600_000 + RETENTION,
    });
  });

  it('claims, reads, queries and gives back the entry already claimed', async () => {
    const { ledger } = setup();
    const entry = await claimed(ledger);
    expect(await ledger.get(entry.id)).toStrictEqual(entry);
    expect(await ledger.get('unknown')).toBeUndefined();
    const again = await ledger.claim({ ...entry, owner: 'inst-b:req-2' });
    expect(again).toStrictEqual({ acquired: false, entry });
    expect(await ledger.query({ state: 'claimed' })).toStrictEqual([entry]);
    expect(await ledger.query({ state: 'settled' })).toStrictEqual([]);
  });

  it('binds a payment identifier once and reads the binding back', async () => {
    const { ledger } = setup();
    const binding = { key: '0xpayer:pay_1', fingerprint: 'f1', entry: 'id-1', createdAt: 1, expiresAt: 2 };
    expect(await ledger.identifier(binding.key)).toBeUndefined();
    const first = { ...binding, version: 1 };
    expect(await ledger.bindIdentifier(binding)).toStrictEqual({ bound: true, binding: first });
    const other = { ...binding, fingerprint: 'f2', entry: 'id-2' };
    expect(await ledger.bindIdentifier(other)).toStrictEqual({ bound: false, binding: first });
    expect(await ledger.bindIdentifier(other, { entry: 'id-1', version: 1 })).toStrictEqual({
      bound: true,
      binding: { ...other, version: 2 },
    });
    expect(await ledger.identifier(binding.key)).toStrictEqual({ ...other, version: 2 });
  });

  describe('transition', () => {
    it('moves an entry held by its owner from an expected state and extends its lease', async () => {
      const { clock, ledger } = setup();
      const entry = await claimed(ledger);
      clock.now = START + 1_000;
      const moved = await ledger.transition(entry, ['claimed'], { state: 'verified' });
      expect(moved).toStrictEqual({
        ...entry,
        state: 'verified',
        leaseUntil: START + 1_000 + LEASE,
        updatedAt: START + 1_000,
      });
      expect(await ledger.get(entry.id)).toStrictEqual(moved);
    });

    it('keeps a lease the patch sets itself', async () => {
      const { ledger } = setup();
      const entry = await claimed(ledger, 'settling');
      const moved = await ledger.transition(entry, ['settling'], { state: 'uncertain', leaseUntil: 0 });
      expect(moved?.leaseUntil).toBe(0);
    });

    it('changes nothing from another state or for another owner', async () => {
      const { ledger } = setup();
      const entry = await claimed(ledger);
      expect(await ledger.transition(entry, ['verified'], { state: 'settling' })).toBeUndefined();
      expect(
        await ledger.transition({ id: entry.id, owner: 'inst-b:req-9' }, ['claimed'], { state: 'verified' }),
      ).toBeUndefined();
      expect(await ledger.get(entry.id)).toStrictEqual(entry);
    });

    it('makes the lease keeper renew the entry in its new state, and only when the change applied', async () => {
      const { clock, ledger } = setup();
      const entry = await claimed(ledger);
      ledger.leases.hold(entry, 'claimed');
      await ledger.transition(entry, ['claimed'], { state: 'verified' });
      clock.now = START + 2_000;
      await ledger.leases.renewAll();
      expect(await ledger.get(entry.id)).toMatchObject({
        state: 'verified',
        leaseUntil: START + 2_000 + LEASE,
      });

      // A change that did not apply leaves the keeper expecting the state the entry is really in.
      expect(await ledger.transition(entry, ['settling'], { state: 'settled' })).toBeUndefined();
      clock.now = START + 4_000;
      await ledger.leases.renewAll();
      expect(await ledger.get(entry.id)).toMatchObject({
        state: 'verified',
        leaseUntil: START + 4_000 + LEASE,
      });
    });
  });

  describe('takeOver', () => {
    it('gives the entry to a new owner with a fresh lease, in the state it was found in', async () => {
      const { clock, ledger } = setup();
      const entry = await claimed(ledger, 'uncertain');
      clock.now = START + 3_000;
      const taken = await ledger.takeOver(entry, 'inst-a:req-2');
      expect(taken).toStrictEqual({
        ...entry,
        owner: 'inst-a:req-2',
        leaseUntil: START + 3_000 + LEASE,
        updatedAt: START + 3_000,
      });
    });

    it('applies a patch with the take-over', async () => {
      const { ledger } = setup();
      const entry = await claimed(ledger, 'settling');
      const taken = await ledger.takeOver(entry, 'inst-b:r', { state: 'uncertain', resolution });
      expect(taken).toMatchObject({ state: 'uncertain', owner: 'inst-b:r', resolution });
    });

    it('changes nothing when the entry changed state or owner since it was read', async () => {
      const { ledger } = setup();
      const entry = await claimed(ledger, 'uncertain');
      expect(await ledger.takeOver({ ...entry, state: 'settling' }, 'inst-b:r')).toBeUndefined();
      expect(await ledger.takeOver({ ...entry, owner: 'inst-c:r' }, 'inst-b:r')).toBeUndefined();
      expect(await ledger.get(entry.id)).toStrictEqual(entry);
    });
  });

  describe('adoptAbandoned', () => {
    it('marks an abandoned settling entry uncertain, free at once, with the resolution', async () => {
      const { ledger } = setup();
      const entry = await claimed(ledger, 'settling');
      expect(await ledger.adoptAbandoned(entry, resolution)).toBe(true);
      expect(await ledger.get(entry.id)).toMatchObject({
        state: 'uncertain',
        owner: entry.owner,
        leaseUntil: 0,
        resolution,
      });
      expect(await ledger.adoptAbandoned(entry, resolution)).toBe(false);
    });

    it.each(['claimed', 'verified'] as const)(
      'removes an abandoned %s entry: nothing was spent',
      async (state) => {
        const { ledger } = setup();
        const entry = await claimed(ledger, state);
        expect(await ledger.adoptAbandoned(entry, resolution)).toBe(true);
        expect(await ledger.get(entry.id)).toBeUndefined();
        expect(await ledger.adoptAbandoned(entry, resolution)).toBe(false);
      },
    );

    it('leaves an entry another owner took meanwhile', async () => {
      const { ledger } = setup();
      const entry = await claimed(ledger, 'settling');
      const stale = { ...entry, owner: 'inst-z:gone' };
      expect(await ledger.adoptAbandoned(stale, resolution)).toBe(false);
      expect(await ledger.get(entry.id)).toStrictEqual(entry);
    });
  });

  describe('dropClaim and release', () => {
    it('drops an entry only in the state and with the owner it was read with', async () => {
      const { ledger } = setup();
      const entry = await claimed(ledger, 'settled');
      expect(await ledger.dropClaim({ ...entry, state: 'claimed' })).toBe(false);
      expect(await ledger.dropClaim({ ...entry, owner: 'inst-b:r' })).toBe(false);
      expect(await ledger.get(entry.id)).toBeDefined();
      expect(await ledger.dropClaim(entry)).toBe(true);
      expect(await ledger.get(entry.id)).toBeUndefined();
    });

    it.each(['claimed', 'verified'] as const)('releases a %s claim of its owner', async (state) => {
      const { ledger } = setup();
      const entry = await claimed(ledger, state);
      expect(await ledger.release({ id: entry.id, owner: 'inst-b:r' })).toBe(false);
      expect(await ledger.release(entry)).toBe(true);
      expect(await ledger.get(entry.id)).toBeUndefined();
    });

    it.each(['settling', 'settled', 'uncertain', 'rejected'] as const)(
      'never releases a %s entry: a charge may have happened',
      async (state) => {
        const { ledger } = setup();
        const entry = await claimed(ledger, state);
        expect(await ledger.release(entry)).toBe(false);
        expect(await ledger.get(entry.id)).toStrictEqual(entry);
      },
    );
  });

  it('counts a lease as ended only once the clock passed it', () => {
    const { clock, ledger } = setup();
    expect(ledger.leaseEnded({ leaseUntil: START }, START)).toBe(false);
    expect(ledger.leaseEnded({ leaseUntil: START - 1 }, START)).toBe(true);
    expect(ledger.leaseEnded({ leaseUntil: START + 1 }, START)).toBe(false);
    clock.now = START + 10;
    expect(ledger.leaseEnded({ leaseUntil: START + 10 })).toBe(false);
    expect(ledger.leaseEnded({ leaseUntil: START + 9 })).toBe(true);
  });

  describe('replayUntil', () => {
    const at = (validBefore: number, createdAt: number, requirements: unknown) =>
      ({ validBefore, createdAt, requirements }) as LedgerEntry;

    it('ends at validBefore when that is later than maxTimeoutSeconds from the first request', () => {
      const { ledger } = setup();
      expect(ledger.replayUntil(at(2_000, 1_000_000, { maxTimeoutSeconds: 60 }))).toBe(2_000_000);
    });

    it('lasts at least maxTimeoutSeconds from the first request', () => {
      const { ledger } = setup();
      expect(ledger.replayUntil(at(1_000, 999_000, { maxTimeoutSeconds: 60 }))).toBe(1_059_000);
      expect(ledger.replayUntil(at(1_000, 999_000, { maxTimeoutSeconds: '30' }))).toBe(1_029_000);
    });

    it('lasts as long as the ledger keeps an entry resolved after its request (its answer never delivered)', () => {
      const { ledger } = setup();
      const resolved = {
        ...at(1_000, 999_000, { maxTimeoutSeconds: 60 }),
        expiresAt: 87_400_000,
        resolution: {
          by: 'reconciler',
          instance: 'a',
          at: 1,
          from: 'uncertain',
          action: 'confirmed-on-chain',
          attempts: 1,
        },
      } as LedgerEntry;
      expect(ledger.replayUntil(resolved)).toBe(87_400_000);
      expect(ledger.replayUntil({ ...resolved, resolution: undefined } as LedgerEntry)).toBe(1_059_000);
      // Never shorter than the window, whatever the retention.
      expect(ledger.replayUntil({ ...resolved, expiresAt: 1_000 })).toBe(1_059_000);
    });

    it.each([
      ['no requirements', undefined],
      ['null requirements', null],
      ['no maxTimeoutSeconds', { scheme: 'exact' }],
      ['a maxTimeoutSeconds that is no number', { maxTimeoutSeconds: 'soon' }],
      ['an infinite maxTimeoutSeconds', { maxTimeoutSeconds: Number.POSITIVE_INFINITY }],
    ])('counts %s as no minimum', (_label, requirements) => {
      const { ledger } = setup();
      expect(ledger.replayUntil(at(1_000, 999_500, requirements))).toBe(1_000_000);
      expect(ledger.replayUntil(at(1_000, 1_000_500, requirements))).toBe(1_000_500);
    });
  });

  it.each([
    ['claimed', true],
    ['verified', true],
    ['settling', true],
    ['settled', false],
    ['rejected', false],
    ['uncertain', false],
  ] as const)('counts a %s entry as in flight: %s', (state, inFlight) => {
    const { ledger } = setup();
    expect(ledger.isInFlight({ state } as LedgerEntry)).toBe(inFlight);
  });

  describe('flights', () => {
    it('shares a running flight and forgets it once it ends', async () => {
      const { ledger } = setup();
      expect(ledger.flight('p')).toBeUndefined();
      const end = ledger.startFlight('p');
      const running = ledger.flight('p');
      expect(running).toBeInstanceOf(Promise);
      let done = false;
      void running!.then(() => {
        done = true;
      });
      await Promise.resolve();
      expect(done).toBe(false);
      end();
      await running;
      expect(done).toBe(true);
      expect(ledger.flight('p')).toBeUndefined();
    });

    it('keeps a newer flight of the same payment when an older one ends', async () => {
      const { ledger } = setup();
      const endOld = ledger.startFlight('p');
      const old = ledger.flight('p');
      const endNew = ledger.startFlight('p');
      const newer = ledger.flight('p');
      expect(newer).not.toBe(old);
      endOld();
      await old;
      expect(ledger.flight('p')).toBe(newer);
      endNew();
      expect(ledger.flight('p')).toBeUndefined();
    });

    it('keeps flights of other payments apart', () => {
      const { ledger } = setup();
      const endA = ledger.startFlight('a');
      ledger.startFlight('b');
      endA();
      expect(ledger.flight('a')).toBeUndefined();
      expect(ledger.flight('b')).toBeInstanceOf(Promise);
    });
  });

  it('reports a lease renewal that failed with the payment it was for', async () => {
    const errors: Array<[unknown, string]> = [];
    const { store, ledger } = setup({ onLeaseError: (error, id) => errors.push([error, id]) });
    const entry = await claimed(ledger);
    ledger.leases.hold(entry, 'claimed');
    await store.close();
    await ledger.leases.renewAll();
    expect(errors).toHaveLength(1);
    expect(errors[0]![0]).toMatchObject({ code: 'ledger_unavailable' });
    expect(errors[0]![1]).toBe(entry.id);
  });
});
