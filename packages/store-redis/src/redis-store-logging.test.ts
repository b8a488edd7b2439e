import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRedisLedgerStore } from './redis-store';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createRedisLedgerStore on a Redis that does not answer', () => {
  it('reports the outage once to its logger and prints nothing to the console', async () => {
    const printed = [
      vi.spyOn(console, 'error').mockImplementation(() => {}),
      vi.spyOn(console, 'warn').mockImplementation(() => {}),
      vi.spyOn(console, 'log').mockImplementation(() => {}),
    ];
    const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
    // Each connection attempt (the first and every reconnect) goes through Redis#connect.
    const connect = Redis.prototype.connect;
    let attempts = 0;
    let thirdReconnect!: () => void;
    const reconnected = new Promise<void>((resolve) => {
      thirdReconnect = resolve;
    });
    vi.spyOn(Redis.prototype, 'connect').mockImplementation(function (this: Redis, ...args) {
      attempts += 1;
      if (attempts === 4) thirdReconnect();
      return connect.apply(this, args);
    });
    let firstWarning!: () => void;
    const warned = new Promise<void>((resolve) => {
      firstWarning = resolve;
    });
    // Port 1 refuses at once; ioredis keeps reconnecting with backoff until closed.
    const store = createRedisLedgerStore({
      redis: 'redis://127.0.0.1:1',
      purgeIntervalMs: 0,
      logger: {
        warn(fields, message) {
          warnings.push({ fields, message });
          firstWarning();
        },
      },
    });
    await warned;
    // Three reconnects fail after the first warning: the listener stays quiet until the next outage.
    await reconnected;
    await store.close().catch(() => {});
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      fields: { code: 'ledger_unavailable', err: expect.objectContaining({ code: 'ECONNREFUSED' }) },
      message: 'Redis ledger connection failed; reconnecting',
    });
    for (const spy of printed) expect(spy).not.toHaveBeenCalled();
  });
});
