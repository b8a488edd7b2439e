import { describe, expect, it } from 'vitest';
import { BroadcastRejectedError, parseBroadcastError } from './errors';

describe('broadcast error parsing', () => {
  it.each([
    [
      'sendrawtransaction RPC error: {"code":-26,"message":"min relay fee not met, 100 < 141"}',
      -26,
      'min relay fee not met, 100 < 141',
      'policy_rejected',
    ],
    [
      'sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}',
      -25,
      'bad-txns-inputs-missingorspent',
      'missing_or_spent_inputs',
    ],
    ['sendrawtransaction RPC error -22: TX decode failed', -22, 'TX decode failed', 'decode_failed'],
    [
      'sendrawtransaction RPC error -27: Transaction already in block chain',
      -27,
      'Transaction already in block chain',
      'already_in_chain',
    ],
    ['sendrawtransaction RPC error -28: Loading block index…', -28, 'Loading block index…', 'warming_up'],
  ])('parses %s', (raw, code, message, reason) => {
    const error = parseBroadcastError(raw);
    expect(error).toBeInstanceOf(BroadcastRejectedError);
    expect(error.code).toBe('BROADCAST_REJECTED');
    expect(error.rpcCode).toBe(code);
    expect(error.rpcMessage).toBe(message);
    expect(error.reason).toBe(reason);
    expect(error.raw).toBe(raw);
  });

  it('keeps unknown text without a code', () => {
    const error = parseBroadcastError('something else went wrong');
    expect(error.rpcCode).toBeUndefined();
    expect(error.reason).toBe('other');
    expect(error.rpcMessage).toBe('something else went wrong');
  });

  it('marks only warm-up as retryable', () => {
    expect(parseBroadcastError('sendrawtransaction RPC error -28: warming up').retryable).toBe(true);
    expect(parseBroadcastError('sendrawtransaction RPC error -26: dust').retryable).toBe(false);
  });
});
