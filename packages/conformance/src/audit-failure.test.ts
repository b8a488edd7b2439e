import { describe, expect, it } from 'vitest';
import { AuditFailure, checkEqual } from './audit-failure';

describe('checkEqual', () => {
  it('fails with both values named, bigints (balances) among them, never a serialization error', () => {
    expect(() => checkEqual(10n, 9n, 'payer balance')).toThrow(
      new AuditFailure('payer balance: expected 9, got 10'),
    );
    expect(() => checkEqual('402', '200', 'status')).toThrow('status: expected "200", got "402"');
    expect(() => checkEqual(1000n, 1000n, 'charge')).not.toThrow();
  });
});
