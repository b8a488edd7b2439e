import { describe, expect, it } from 'vitest';
import { SpendLedger } from './spend-limits';

describe('SpendLedger', () => {
  it('allows an amount up to the per-payment limit and the remaining total', () => {
    const ledger = new SpendLedger({ maxPerPayment: 1000n, maxTotal: 1500n });
    expect(ledger.allows(1000n)).toBe(true);
    expect(ledger.allows(1001n)).toBe(false);
    ledger.reserve(1000n);
    expect(ledger.committed).toBe(1000n);
    expect(ledger.allows(500n)).toBe(true);
    expect(ledger.allows(501n)).toBe(false);
  });

  it('gives back a refunded amount', () => {
    const ledger = new SpendLedger({ maxPerPayment: 1000n, maxTotal: 1000n });
    ledger.reserve(1000n);
    expect(ledger.allows(1n)).toBe(false);
    ledger.refund(1000n);
    expect(ledger.committed).toBe(0n);
    expect(ledger.allows(1000n)).toBe(true);
  });

  it('has no total limit when maxTotal is not set', () => {
    const ledger = new SpendLedger({ maxPerPayment: 10n });
    for (let i = 0; i < 100; i++) ledger.reserve(10n);
    expect(ledger.allows(10n)).toBe(true);
    expect(ledger.allows(11n)).toBe(false);
  });
});
