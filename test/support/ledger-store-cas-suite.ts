// The ledger store suite's compare-and-set steps: update and remove apply only from an expected
// state (and owner), and an error after settlement is never the paid answer.
import type { LedgerPatch, LedgerStore } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import { buildLedgerEntry, NOT_UTF8, newId, response } from './ledger-store-fixtures';
import { describeSettlementInvariant } from './ledger-store-invariant-suite';

/** Registers the update and remove tests; `openStore` gives a store on a namespace of its own. */
export function describeCompareAndSet(openStore: () => Promise<LedgerStore>): void {
  describe('update', () => {
    it('applies the patch only from an expected state and returns the updated entry', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry();
      await store.claim(entry);
      const before = Date.now();

      expect(
        await store.update(entry.id, { state: ['verified', 'settling'] }, { state: 'settled' }),
      ).toBeUndefined();
      expect((await store.get(entry.id))?.state).toBe('claimed');

      const updated = await store.update(
        entry.id,
        { state: ['claimed'] },
        { state: 'verified', leaseUntil: 42 },
      );
      expect(updated).toEqual({
        ...entry,
        state: 'verified',
        leaseUntil: 42,
        updatedAt: updated?.updatedAt,
      });
      expect(updated!.updatedAt).toBeGreaterThanOrEqual(before);
      expect(await store.get(entry.id)).toEqual(updated);
    });

    it('applies the patch only for the expected owner', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry({ state: 'settling', owner: 'instance-a:req-1' });
      await store.claim(entry);

      const stolen = await store.update(
        entry.id,
        { state: ['settling'], owner: 'instance-b:req-2' },
        { state: 'settled', owner: 'instance-b:req-2' },
      );
      expect(stolen).toBeUndefined();
      expect(await store.get(entry.id)).toEqual(entry);

      const own = await store.update(
        entry.id,
        { state: ['settling'], owner: 'instance-a:req-1' },
        { state: 'uncertain' },
      );
      expect(own?.state).toBe('uncertain');
      expect(own?.owner).toBe('instance-a:req-1');
    });

    it('returns undefined for an unknown id', async () => {
      const store = await openStore();
      expect(
        await store.update(newId('missing'), { state: ['claimed'] }, { state: 'verified' }),
      ).toBeUndefined();
      expect(await store.get(newId('missing'))).toBeUndefined();
    });

    it('sets every patchable field and leaves fields patched with undefined unchanged', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry({ transaction: '0xold', error: { code: 'x', message: 'y' } });
      await store.claim(entry);
      const patch = {
        state: 'settled' as const,
        resource: 'https://fees.example/api/v1/fees/later',
        route: 'GET /api/v1/fees/later',
        network: 'eip155:8453',
        payer: '0xnewpayer',
        payload: { replaced: true },
        requirements: [1, 'two', { three: 3 }],
        validBefore: 1_900_000_000,
        transaction: '0xnew',
        receipt: { success: true, transaction: '0xnew', network: 'eip155:8453', payer: '0xnewpayer' },
        response: response(NOT_UTF8, 201),
        error: { code: 'settlement_pending', message: 'still pending' },
        resolution: {
          by: 'reconciler' as const,
          instance: 'instance-c',
          at: 1_800_000_000_123,
          from: 'uncertain' as const,
          action: 'confirmed-on-chain' as const,
          attempts: 2,
          note: 'Transfer found in block 12',
        },
        owner: 'instance-c:req-3',
        leaseUntil: entry.leaseUntil + 1,
        expiresAt: entry.expiresAt + 1,
      };
      const updated = await store.update(entry.id, { state: ['claimed'] }, patch);
      expect(updated).toEqual({ ...entry, ...patch, updatedAt: updated?.updatedAt });
      expect(await store.get(entry.id)).toEqual(updated);

      const kept = await store.update(
        entry.id,
        { state: ['settled'] },
        {
          state: 'settled',
          transaction: undefined,
          receipt: undefined,
          response: undefined,
          error: undefined,
          resolution: undefined,
        },
      );
      expect(kept).toEqual({ ...updated, updatedAt: kept?.updatedAt });
    });

    it('never takes id, createdAt or updatedAt from a patch', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry();
      await store.claim(entry);
      const other = newId('other');
      const patch = { state: 'verified', id: other, createdAt: 1, updatedAt: 2 } as LedgerPatch;
      const updated = await store.update(entry.id, { state: ['claimed'] }, patch);
      expect(updated?.id).toBe(entry.id);
      expect(updated?.createdAt).toBe(entry.createdAt);
      expect(updated?.updatedAt).toBeGreaterThan(2);
      expect(updated?.state).toBe('verified');
      expect(await store.get(entry.id)).toEqual(updated);
      expect(await store.get(other)).toBeUndefined();
    });

    it('changes nothing when no state is expected', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry();
      await store.claim(entry);
      expect(await store.update(entry.id, { state: [] }, { state: 'verified' })).toBeUndefined();
      expect(
        await store.update(entry.id, { state: [], owner: entry.owner }, { state: 'verified' }),
      ).toBeUndefined();
      expect(await store.remove(entry.id, { state: [] })).toBe(false);
      expect(await store.remove(entry.id, { state: [], owner: entry.owner })).toBe(false);
      expect(await store.get(entry.id)).toEqual(entry);
    });
  });

  describeSettlementInvariant(openStore);

  describe('remove', () => {
    it('deletes only from an expected state and owner', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry({ state: 'verified' });
      await store.claim(entry);

      expect(await store.remove(entry.id, { state: ['claimed'] })).toBe(false);
      expect(await store.remove(entry.id, { state: ['verified'], owner: 'someone-else' })).toBe(false);
      expect(await store.get(entry.id)).toEqual(entry);

      expect(await store.remove(entry.id, { state: ['claimed', 'verified'], owner: entry.owner })).toBe(true);
      expect(await store.get(entry.id)).toBeUndefined();
      expect(await store.remove(entry.id, { state: ['verified'] })).toBe(false);
    });

    it('frees the id for a new claim', async () => {
      const store = await openStore();
      const entry = buildLedgerEntry();
      await store.claim(entry);
      expect(await store.remove(entry.id, { state: ['claimed'] })).toBe(true);
      const reclaimed = await store.claim({ ...entry, owner: 'instance-b:req-2' });
      expect(reclaimed.acquired).toBe(true);
      expect((await store.get(entry.id))?.owner).toBe('instance-b:req-2');
    });
  });
}
