// The ledger store suite's invariant: an error after settlement is never the paid answer
// (docs/ledger.md).
import type { LedgerStore } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import { ALL_BYTES, buildLedgerEntry, response } from './ledger-store-fixtures';

/** Registers the invariant tests; `openStore` gives a store on a namespace of its own. */
export function describeSettlementInvariant(openStore: () => Promise<LedgerStore>): void {
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

    it.each([400, 402, 503])(
      'does not settle an entry that keeps a %i response it already holds',
      async (status) => {
        const store = await openStore();
        const entry = buildLedgerEntry({ state: 'rejected', response: response(ALL_BYTES, status) });
        await store.claim(entry);
        expect(await store.update(entry.id, { state: ['rejected'] }, { state: 'settled' })).toBeUndefined();
        expect(await store.get(entry.id)).toEqual(entry);
      },
    );

    it('settles an entry that keeps a 399 response it already holds', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry({ state: 'settling', response: response(ALL_BYTES, 399) });
      await store.claim(entry);
      const settled = await store.update(entry.id, { state: ['settling'] }, { state: 'settled' });
      expect(settled).toEqual({ ...entry, state: 'settled', updatedAt: settled?.updatedAt });
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

    it('updates an entry holding an error response to any state but settled', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry({ state: 'rejected', response: response(ALL_BYTES, 402) });
      await store.claim(entry);
      const moved = await store.update(
        entry.id,
        { state: ['rejected'] },
        { state: 'rejected', owner: 'instance-b:req-2', leaseUntil: 7 },
      );
      expect(moved).toEqual({
        ...entry,
        owner: 'instance-b:req-2',
        leaseUntil: 7,
        updatedAt: moved?.updatedAt,
      });
      const settled = await store.update(
        entry.id,
        { state: ['rejected'] },
        { state: 'settled', response: response(ALL_BYTES, 200) },
      );
      expect(settled?.response?.status).toBe(200);
    });
  });
}
