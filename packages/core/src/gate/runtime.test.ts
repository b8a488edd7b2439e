import { describe, expect, it } from 'vitest';
import { decodeHeaderJson } from '../protocol/codec';
import { createRuntimeHarness, recordingLogger } from '../test-support/gate-harness';
import { reject, safeHook } from './runtime';

describe('safeHook', () => {
  it('calls the hook', () => {
    let called = 0;
    safeHook({ logger: undefined }, () => {
      called++;
    });
    expect(called).toBe(1);
  });

  it('logs and ignores a hook that throws', () => {
    const logger = recordingLogger();
    const error = new Error('metrics down');
    expect(() =>
      safeHook({ logger }, () => {
        throw error;
      }),
    ).not.toThrow();
    expect(logger.lines).toEqual([{ level: 'warn', fields: { err: error }, message: 'gate hook failed' }]);
  });

  it('logs and ignores a hook whose promise rejects', async () => {
    const logger = recordingLogger();
    const error = new Error('async metrics down');
    let rejected!: Promise<never>;
    safeHook({ logger }, () => {
      rejected = Promise.reject(error);
      return rejected;
    });
    await rejected.catch(() => undefined);
    await Promise.resolve();
    expect(logger.lines).toEqual([{ level: 'warn', fields: { err: error }, message: 'gate hook failed' }]);
  });

  it('ignores a failing hook without a logger too', async () => {
    expect(() =>
      safeHook({ logger: undefined }, () => {
        throw new Error('x');
      }),
    ).not.toThrow();
    const rejected = Promise.reject(new Error('y'));
    safeHook({ logger: undefined }, () => rejected);
    await rejected.catch(() => undefined);
    // An unhandled rejection would fail the run: the hook's promise was caught.
    await new Promise((resolve) => setImmediate(resolve));
  });
});

describe('reject', () => {
  it('answers the route challenge naming the code, with extra headers, and reports onRejected', () => {
    const h = createRuntimeHarness();
    const { match } = h.admitted('/paid');
    const outcome = reject(h.rt, match, 'r-7', 'payment_expired', 'too late', { 'payment-response': 'r' });
    if (outcome.kind !== 'respond') throw new Error('expected a response');
    expect(outcome.response.status).toBe(402);
    expect(outcome.response.headers['payment-response']).toBe('r');
    expect(outcome.response.headers['x-request-id']).toBe('r-7');
    expect(decodeHeaderJson(outcome.response.headers['payment-required']!)).toMatchObject({
      error: 'payment_expired',
    });
    expect(h.recorder.of('onRejected')).toEqual([['r-7', 'payment_expired', 'too late']]);
  });
});
