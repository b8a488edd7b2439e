// The ledger store suite's purge rules: what expires, and what a store keeps past its expiry
// because a charge may have happened (docs/ledger.md#purging).
import { randomBytes } from 'node:crypto';
import type { LedgerStore } from '@tollbooth/core';
import { expect, it } from 'vitest';
import { ALL_BYTES, buildLedgerEntry, HOUR, response } from './ledger-store-fixtures';

/** Registers the purge tests; `openStore` gives a store on a namespace of its own. */
export function describePurgeRules(openStore: () => Promise<LedgerStore>): void {
  it('purges only entries that expired before the given time', async () => {
    const store = await openStore();
    const at = Date.now() + 10 * HOUR;
    const expired = [
      buildLedgerEntry({
        state: 'settled',
        transaction: '0xpurge',
        response: response(ALL_BYTES),
        expiresAt: at - 1000,
      }),
      buildLedgerEntry({ state: 'rejected', payer: '0xpurged', expiresAt: at - 1 }),
    ];
    const kept = [
      buildLedgerEntry({ expiresAt: at }),
      buildLedgerEntry({ transaction: '0xpurge', expiresAt: at + 1 }),
    ];
    for (const entry of [...expired, ...kept]) await store.claim(entry);

    expect(await store.purgeExpired(at)).toBe(2);
    for (const entry of expired) expect(await store.get(entry.id)).toBeUndefined();
    for (const entry of kept) expect(await store.get(entry.id)).toEqual(entry);
    expect((await store.query({})).map((e) => e.id).sort()).toEqual(kept.map((e) => e.id).sort());
    expect((await store.query({ transaction: '0xpurge' })).map((e) => e.id)).toEqual([kept[1]!.id]);
    expect(await store.query({ payer: '0xpurged' })).toEqual([]);
    expect(await store.purgeExpired(at)).toBe(0);
    expect((await store.claim(expired[0]!)).acquired).toBe(true);
  });

  it('never purges a settled entry that holds no answer yet, and purges it once its answer is stored', async () => {
    // Settled before its handler ran and the answer never produced: its payer is served whenever
    // it retries (the gate runs the handler then), so the entry outlives its expiry — here one
    // already past on the real clock too, as a store that expires keys itself would see it.
    const store = await openStore();
    const past = Date.now() - 1000;
    const at = Date.now() + 10 * HOUR;
    const receipt = { success: true, transaction: '0xpending' };
    const settledFirst = buildLedgerEntry({ state: 'settling', transaction: '0xpending' });
    await store.claim(settledFirst);
    await store.update(
      settledFirst.id,
      { state: ['settling'] },
      { state: 'settled', receipt, expiresAt: past },
    );
    const claimedSettled = buildLedgerEntry({ state: 'settled', receipt, expiresAt: past });
    await store.claim(claimedSettled);
    const answered = buildLedgerEntry({
      state: 'settled',
      receipt,
      response: response(ALL_BYTES),
      expiresAt: at - 1,
    });
    await store.claim(answered);

    expect(await store.purgeExpired(at)).toBe(1);
    expect(await store.get(answered.id)).toBeUndefined();
    for (const entry of [settledFirst, claimedSettled]) {
      expect(await store.get(entry.id)).toMatchObject({ state: 'settled', expiresAt: past });
      expect((await store.get(entry.id))?.response).toBeUndefined();
    }
    expect((await store.query({ state: 'settled' })).map((e) => e.id).sort()).toEqual(
      [settledFirst.id, claimedSettled.id].sort(),
    );

    // The answer produced on the payer's retry: the entry expires as any other.
    await store.update(
      settledFirst.id,
      { state: ['settled'] },
      { state: 'settled', response: response(ALL_BYTES) },
    );
    await store.purgeExpired(at);
    expect(await store.get(settledFirst.id)).toBeUndefined();
    expect(await store.get(claimedSettled.id)).toBeDefined();
  });

  it('never purges a settling or uncertain entry until it is resolved, and purges it once it is', async () => {
    // A charge may have happened: the reconciler must still find the entry however long the
    // chain takes to tell (expiresAt already past on the real clock, as in the test above).
    const store = await openStore();
    const past = Date.now() - 1000;
    const at = Date.now() + 10 * HOUR;
    const settling = buildLedgerEntry({ state: 'settling', leaseUntil: 0, expiresAt: past });
    await store.claim(settling);
    const uncertain = buildLedgerEntry({ state: 'settling' });
    await store.claim(uncertain);
    await store.update(
      uncertain.id,
      { state: ['settling'] },
      { state: 'uncertain', leaseUntil: 0, expiresAt: past },
    );
    const bound = {
      key: `0xpayer:pay_${randomBytes(12).toString('hex')}`,
      fingerprint: randomBytes(32).toString('hex'),
      entry: uncertain.id,
      createdAt: past,
      expiresAt: past,
    };
    expect(await store.bindIdentifier(bound)).toEqual({ bound: true, binding: { ...bound, version: 1 } });
    const released = buildLedgerEntry({ state: 'verified', expiresAt: at - 1 });
    await store.claim(released);

    expect(await store.purgeExpired(at)).toBe(1);
    expect(await store.get(released.id)).toBeUndefined();
    expect(await store.get(settling.id)).toMatchObject({ state: 'settling', expiresAt: past });
    expect(await store.get(uncertain.id)).toMatchObject({ state: 'uncertain', expiresAt: past });
    expect(await store.getIdentifier(bound.key)).toEqual({ ...bound, version: 1 });
    // What the reconciler asks for.
    const resolvable = await store.query({
      state: ['claimed', 'verified', 'settling', 'uncertain'],
      leaseUntilBefore: Date.now(),
    });
    expect(resolvable.map((e) => e.id).sort()).toEqual([settling.id, uncertain.id].sort());

    // Resolved (confirmed on chain; expired unused): both expire as any other.
    await store.update(
      uncertain.id,
      { state: ['uncertain'] },
      { state: 'settled', receipt: { success: true }, response: response(ALL_BYTES) },
    );
    await store.update(settling.id, { state: ['settling'] }, { state: 'rejected' });
    await store.purgeExpired(at);
    expect(await store.get(uncertain.id)).toBeUndefined();
    expect(await store.get(settling.id)).toBeUndefined();
    expect(await store.getIdentifier(bound.key)).toBeUndefined();
  });
}
