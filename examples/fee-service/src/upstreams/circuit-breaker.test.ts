import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from './circuit-breaker';
import { CircuitOpenError, UpstreamNotFoundError } from './errors';

function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}
const fail = () => Promise.reject(new Error('down'));
const succeed = () => Promise.resolve('ok');

describe('circuit breaker', () => {
  it('opens after the failure threshold and fails fast without calling', async () => {
    const clock = fakeClock();
    const breaker = createCircuitBreaker({ failureThreshold: 3, resetTimeoutMs: 10_000, now: clock.now });
    for (let i = 0; i < 3; i += 1) await expect(breaker.run(fail)).rejects.toThrow('down');
    expect(breaker.state()).toBe('open');
    let called = false;
    const error = await breaker
      .run(async () => {
        called = true;
        return 'x';
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CircuitOpenError);
    expect((error as CircuitOpenError).code).toBe('UPSTREAM_CIRCUIT_OPEN');
    expect(called).toBe(false);
  });

  it('half-opens after the reset timeout, closes on a successful trial', async () => {
    const clock = fakeClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, resetTimeoutMs: 10_000, now: clock.now });
    await expect(breaker.run(fail)).rejects.toThrow();
    clock.advance(9_999);
    expect(breaker.state()).toBe('open');
    clock.advance(1);
    expect(breaker.state()).toBe('half-open');
    await expect(breaker.run(succeed)).resolves.toBe('ok');
    expect(breaker.state()).toBe('closed');
  });

  it('reopens when the half-open trial fails and lets only one trial through at a time', async () => {
    const clock = fakeClock();
    const breaker = createCircuitBreaker({ failureThreshold: 2, resetTimeoutMs: 5_000, now: clock.now });
    await expect(breaker.run(fail)).rejects.toThrow();
    await expect(breaker.run(fail)).rejects.toThrow();
    clock.advance(5_000);
    let release!: () => void;
    const trial = breaker.run(
      () => new Promise<string>((_, reject) => (release = () => reject(new Error('still down')))),
    );
    await expect(breaker.run(succeed)).rejects.toBeInstanceOf(CircuitOpenError);
    release();
    await expect(trial).rejects.toThrow('still down');
    expect(breaker.state()).toBe('open');
    clock.advance(4_999);
    expect(breaker.state()).toBe('open');
  });

  it('does not count failures the predicate excludes (a 404 is an answer)', async () => {
    const clock = fakeClock();
    const breaker = createCircuitBreaker({ failureThreshold: 1, now: clock.now });
    const notFound = new UpstreamNotFoundError(
      { upstream: 'x', operation: 'GET /tx' },
      'Transaction not found',
    );
    await expect(
      breaker.run(
        () => Promise.reject(notFound),
        (e) => !(e instanceof UpstreamNotFoundError),
      ),
    ).rejects.toBe(notFound);
    expect(breaker.state()).toBe('closed');
  });

  it('reports every bad option at once', () => {
    expect(() => createCircuitBreaker({ failureThreshold: 0, resetTimeoutMs: -1 })).toThrow(
      /failureThreshold must be an integer ≥ 1; resetTimeoutMs must be ≥ 0/,
    );
  });
});
