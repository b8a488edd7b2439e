import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../ledger/types';
import { decodeHeaderJson } from '../protocol/codec';
import { receiptHeaderOf, reconcilerResolution, verdictOf } from './reconciler-verdict';

const resolver = { instance: 'i1', at: 1_000_000 };
const tx = `0x${'7'.repeat(64)}`;

function uncertainEntry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    id: 'eip155:8453:0xasset:0xpayer:0x01',
    state: 'uncertain',
    resource: 'https://api.example.com/paid',
    route: 'GET /paid',
    network: 'eip155:8453',
    payer: '0xpayer',
    payload: { x402Version: 2 },
    requirements: {},
    validBefore: 2_000,
    owner: 'i1:reconciler',
    leaseUntil: 0,
    createdAt: 0,
    updatedAt: 0,
    expiresAt: 0,
    ...overrides,
  };
}

const backoff = (attempts: number) => attempts * 1_000;

describe('verdictOf', () => {
  it('settles an entry the chain shows settled, with the paid answer in the receipt header of its version', () => {
    const response = { status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('paid') };
    const entry = uncertainEntry({ payload: { x402Version: 1 }, response });
    const receipt = { success: true, transaction: tx, network: 'eip155:8453' };
    const verdict = verdictOf(resolver, entry, 'settling', { status: 'settled', receipt }, backoff);
    expect(verdict.patch).toMatchObject({ state: 'settled', transaction: tx, leaseUntil: 0 });
    expect(decodeHeaderJson(verdict.patch.response!.headers['x-payment-response']!)).toMatchObject({
      transaction: tx,
    });
    expect(verdict.done).toEqual({
      by: 'reconciler',
      instance: 'i1',
      at: 1_000_000,
      from: 'settling',
      action: 'confirmed-on-chain',
      attempts: 1,
      note: `transfer ${tx}`,
    });
    expect(verdict.receipt).toBe(receipt);
  });

  it('rejects an authorization that expired unused, free at once', () => {
    const verdict = verdictOf(resolver, uncertainEntry(), 'uncertain', { status: 'expired' }, backoff);
    expect(verdict.patch).toMatchObject({
      state: 'rejected',
      error: { code: 'payment_expired' },
      leaseUntil: 0,
    });
    expect(verdict.done.action).toBe('expired-unused');
  });

  it('says why in the entry: expired unused, or no transfer on chain yet', () => {
    const expired = verdictOf(resolver, uncertainEntry(), 'uncertain', { status: 'expired' }, backoff);
    expect(expired.patch.error).toEqual({
      code: 'payment_expired',
      message: 'the authorization expired unused',
    });
    expect(expired.done.note).toBe('the authorization expired unused');
    const unsettled = verdictOf(resolver, uncertainEntry(), 'uncertain', { status: 'unsettled' }, backoff);
    expect(unsettled.done.note).toBe(
      'no transfer on chain yet; a retry of the exact payload settles it again',
    );
    expect(unsettled.patch).toMatchObject({ state: 'uncertain', leaseUntil: 1_000_000 + 1_000 });
  });

  it('keeps an unanswered entry uncertain, looked at again after a delay growing with its attempts', () => {
    const entry = uncertainEntry({
      resolution: {
        by: 'reconciler',
        instance: 'i1',
        at: 0,
        from: 'uncertain',
        action: 'unresolved',
        attempts: 2,
      },
    });
    const verdict = verdictOf(
      resolver,
      entry,
      'uncertain',
      { status: 'unknown', message: 'rpc down' },
      backoff,
    );
    expect(verdict.done).toMatchObject({ action: 'unresolved', attempts: 3, note: 'rpc down' });
    expect(verdict.patch).toMatchObject({ state: 'uncertain', leaseUntil: 1_000_000 + 3_000 });
  });
});

describe('reconcilerResolution', () => {
  it('does not count taking over an abandoned entry as an attempt', () => {
    expect(reconcilerResolution(resolver, uncertainEntry(), 'settling', 'abandoned').attempts).toBe(0);
  });
});

describe('receiptHeaderOf', () => {
  it('names X-PAYMENT-RESPONSE for a v1 payload and PAYMENT-RESPONSE otherwise', () => {
    expect(receiptHeaderOf({ payload: { x402Version: 1 } })).toBe('x-payment-response');
    expect(receiptHeaderOf({ payload: { x402Version: 2 } })).toBe('payment-response');
  });
});
