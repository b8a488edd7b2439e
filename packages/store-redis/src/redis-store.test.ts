import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer, connect as netConnect, type Socket } from 'node:net';
import type { LedgerEntry } from '@tollbooth/core';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createRedisLedgerStore, type RedisLedgerStoreOptions } from './redis-store';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const probe = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
const reachable = await probe.connect().then(
  () => true,
  () => false,
);
probe.disconnect();
if (!reachable && !process.env.CI) {
  console.warn(`[store-redis] skipping server tests: Redis is not reachable at REDIS_URL=${redisUrl}`);
}

function buildEntry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  const now = Date.now();
  return {
    id: `id-${randomBytes(4).toString('hex')}`,
    state: 'settled',
    resource: 'https://fees.example/api/v1/fees/now',
    route: 'GET /api/v1/fees/now',
    network: 'eip155:84532',
    payer: '0xpayer',
    payload: { a: 1 },
    requirements: { b: 2 },
    validBefore: Math.floor(now / 1000) + 60,
    transaction: '0xtx',
    owner: 'owner',
    leaseUntil: now,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + 60_000,
    ...overrides,
  };
}

/** The message of the invalid_config error the options are refused with. */
function refusal(options: unknown): string {
  try {
    createRedisLedgerStore(options as RedisLedgerStoreOptions);
  } catch (error) {
    expect(error).toMatchObject({ code: 'invalid_config' });
    return (error as Error).message;
  }
  throw new Error('the options were accepted');
}

describe('createRedisLedgerStore', () => {
  // Never connected: the options are refused before the client is used.
  const idle = new Redis(redisUrl, { lazyConnect: true });
  afterAll(() => {
    idle.disconnect();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('reports every invalid option at once', () => {
    expect(() =>
      createRedisLedgerStore({ redis: 'http://nope', keyPrefix: '', purgeIntervalMs: -1 } as never),
    ).toThrow(/redis must be.*keyPrefix.*purgeIntervalMs/);
  });

  it('lists the problems in one sentence, separated by semicolons', () => {
    expect(refusal({ redis: 'http://nope', keyPrefix: '', purgeIntervalMs: 1.5, logger: {} })).toBe(
      'Invalid Redis ledger store options: redis must be a redis:// or rediss:// URL or a client; ' +
        'keyPrefix must be a non-empty string; ' +
        'logger must have a warn(fields, message) method (pino-compatible); ' +
        'purgeIntervalMs must be a non-negative integer (got 1.5)',
    );
  });

  const noClient = 'redis must be an ioredis client or a redis:// URL';
  const noUrl = 'redis must be a redis:// or rediss:// URL or a client';
  it.each([
    ['no options at all', undefined, noClient],
    ['no redis', {}, noClient],
    ['a redis that is no client', { redis: { get() {} } }, noClient],
    ['an http:// URL', { redis: 'http://127.0.0.1:6379' }, noUrl],
    ['a URL with redis:// inside it', { redis: 'xredis://127.0.0.1:6379' }, noUrl],
    ['a redis: URL without its slashes', { redis: 'redis:127.0.0.1:6379' }, noUrl],
    ['an empty keyPrefix', { redis: idle, keyPrefix: '' }, 'keyPrefix must be a non-empty string'],
    ['a keyPrefix that is no string', { redis: idle, keyPrefix: 5 }, 'keyPrefix must be a non-empty string'],
    [
      'a logger without warn',
      { redis: idle, logger: { info() {} } },
      'logger must have a warn(fields, message) method (pino-compatible)',
    ],
    [
      'a null logger',
      { redis: idle, logger: null },
      'logger must have a warn(fields, message) method (pino-compatible)',
    ],
    [
      'a negative purgeIntervalMs',
      { redis: idle, purgeIntervalMs: -1 },
      'purgeIntervalMs must be a non-negative integer (got -1)',
    ],
    [
      'a purgeIntervalMs that is a string',
      { redis: idle, purgeIntervalMs: '5' },
      'purgeIntervalMs must be a non-negative integer (got 5)',
    ],
  ])('refuses %s', (_label, options, problem) => {
    expect(refusal(options)).toBe(`Invalid Redis ledger store options: ${problem}`);
  });

  it('takes a rediss:// URL', async () => {
    // Nothing listens on port 1: the store is made, then closed before it ever connects.
    const store = createRedisLedgerStore({ redis: 'rediss://127.0.0.1:1', purgeIntervalMs: 0 });
    await store.close().catch(() => {});
  });

  it('adds no listener to a client it is given', async () => {
    const counts = () => ['error', 'ready'].map((event) => idle.listenerCount(event));
    const before = counts();
    const store = createRedisLedgerStore({ redis: idle, purgeIntervalMs: 0 });
    expect(counts()).toEqual(before);
    await store.close();
  });

  it('keeps a purge timer only while open and purgeIntervalMs is above 0', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const off = createRedisLedgerStore({ redis: idle, purgeIntervalMs: 0 });
    expect(vi.getTimerCount()).toBe(0);
    const on = createRedisLedgerStore({ redis: idle, purgeIntervalMs: 1 });
    expect(vi.getTimerCount()).toBe(1);
    await on.close();
    expect(vi.getTimerCount()).toBe(0);
    await off.close();
  });

  it('reports a failed purge round to its logger', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    // Not connected and no offline queue: every command fails at once.
    const offline = new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false });
    let reported!: (warning: { fields: Record<string, unknown>; message: string }) => void;
    const warning = new Promise<{ fields: Record<string, unknown>; message: string }>((resolve) => {
      reported = resolve;
    });
    const store = createRedisLedgerStore({
      redis: offline,
      purgeIntervalMs: 1_000,
      logger: { warn: (fields, message) => reported({ fields, message }) },
    });
    vi.advanceTimersByTime(1_000);
    expect(await warning).toMatchObject({
      fields: { code: 'ledger_unavailable', err: expect.any(Error) },
      message: 'ledger purge round failed',
    });
    await store.close();
    offline.disconnect();
  });

  describe.runIf(reachable || process.env.CI)('against the server', () => {
    const run = `tollbooth-unit:${randomBytes(6).toString('hex')}:`;
    const admin = new Redis(redisUrl);
    const keys = () => admin.keys(`${run}*`);
    afterAll(async () => {
      const left = await keys();
      if (left.length > 0) await admin.del(...left);
      await admin.quit();
    });

    it('writes under tollbooth:ledger: by default, also for options given as undefined', async () => {
      // The run's own namespace is the client's prefix; the store adds its default one after it.
      const client = new Redis(redisUrl, { keyPrefix: `${run}default:` });
      // Options given as undefined take their defaults too.
      const store = createRedisLedgerStore({
        redis: client,
        keyPrefix: undefined,
        purgeIntervalMs: undefined,
        logger: undefined,
      });
      const entry = buildEntry();
      await store.claim(entry);
      expect(await admin.exists(`${run}default:tollbooth:ledger:e:${entry.id}`)).toBe(1);
      // The indexes too: every key the store wrote carries the default prefix.
      const written = (await keys()).filter((key) => key.startsWith(`${run}default:`));
      expect(written.length).toBeGreaterThan(1);
      expect(written.filter((key) => !key.startsWith(`${run}default:tollbooth:ledger:`))).toEqual([]);
      await admin.del(...written);
      await store.close();
      await client.quit();
    });

    it('lets Redis expire entries at expiresAt and purges their index members afterwards', async () => {
      const store = createRedisLedgerStore({
        redis: redisUrl,
        keyPrefix: `${run}expiry:`,
        purgeIntervalMs: 0,
      });
      const entry = buildEntry({
        expiresAt: Date.now() + 60_000,
        response: { status: 200, headers: {}, body: Uint8Array.from([123, 125]) },
      });
      await store.claim(entry);
      // Redis holds the entry until exactly expiresAt (read from the key the store wrote)...
      const key = `${run}expiry:e:${entry.id}`;
      expect(await admin.pexpiretime(key)).toBe(entry.expiresAt);
      // ...and deletes it then: moved to now with the same expiry mechanism, no waiting.
      expect(await admin.pexpireat(key, Date.now() - 1)).toBe(1);
      expect(await admin.exists(key)).toBe(0);
      expect(await store.get(entry.id)).toBeUndefined();
      expect(await store.query({ transaction: '0xtx' })).toEqual([]);
      expect((await keys()).sort()).toEqual(
        [
          `${run}expiry:created`,
          `${run}expiry:expires`,
          `${run}expiry:payer:0xpayer`,
          `${run}expiry:refs:payer`,
          `${run}expiry:refs:tx`,
          `${run}expiry:state:settled`,
          `${run}expiry:tx:0xtx`,
        ].sort(),
      );
      // Redis deleted the entry itself, so nothing is counted, but every index member goes.
      expect(await store.purgeExpired(entry.expiresAt + 1)).toBe(0);
      expect(await keys()).toEqual([]);
      await store.close();
    });

    it('gives a settled entry no expiry while it holds no answer, and its expiresAt once it does', async () => {
      const store = createRedisLedgerStore({
        redis: redisUrl,
        keyPrefix: `${run}pending:`,
        purgeIntervalMs: 0,
      });
      const entry = buildEntry({ expiresAt: Date.now() + 60_000 });
      await store.claim(entry);
      const key = `${run}pending:e:${entry.id}`;
      // -1: the key exists and has no expiry.
      expect(await admin.pexpiretime(key)).toBe(-1);
      expect(await admin.zscore(`${run}pending:expires`, entry.id)).toBe('inf');
      await store.update(
        entry.id,
        { state: ['settled'] },
        { state: 'settled', response: { status: 200, headers: {}, body: Uint8Array.from([123, 125]) } },
      );
      expect(await admin.pexpiretime(key)).toBe(entry.expiresAt);
      expect(Number(await admin.zscore(`${run}pending:expires`, entry.id))).toBe(entry.expiresAt);
      await store.purgeExpired(entry.expiresAt + 1);
      expect(await store.get(entry.id)).toBeUndefined();
      await store.close();
    });

    it('gives a binding no expiry while its entry is kept, and its own expiresAt back once the answer is stored', async () => {
      const store = createRedisLedgerStore({
        redis: redisUrl,
        keyPrefix: `${run}bound:`,
        purgeIntervalMs: 0,
      });
      const entry = buildEntry({ state: 'verified', expiresAt: Date.now() + 60_000 });
      const binding = {
        key: '0xpayer:pay_bound',
        fingerprint: 'f'.repeat(64),
        entry: entry.id,
        createdAt: Date.now(),
        expiresAt: Date.now() + 30_000,
      };
      // Bound before settlement (nothing charged yet): the binding's own expiry.
      await store.claim(entry);
      await store.bindIdentifier(binding);
      const key = `${run}bound:i:${binding.key}`;
      expect(await admin.pexpiretime(key)).toBe(binding.expiresAt);
      // Settled without its answer: the binding follows its entry (-1: no expiry).
      await store.update(entry.id, { state: ['verified'] }, { state: 'settled' });
      expect(await admin.pexpiretime(key)).toBe(-1);
      await store.update(
        entry.id,
        { state: ['settled'] },
        { state: 'settled', response: { status: 200, headers: {}, body: Uint8Array.from([123, 125]) } },
      );
      expect(await admin.pexpiretime(key)).toBe(binding.expiresAt);
      // Purged with its entry, the entry's reference to its binding goes too.
      await store.purgeExpired(entry.expiresAt + 1);
      expect(await admin.exists(`${run}bound:e:${entry.id}`)).toBe(0);
      expect(await admin.hexists(`${run}bound:refs:identifier`, entry.id)).toBe(0);
      await store.close();
    });

    it('reads a binding stored before versions existed as version 1, and replaces it from there', async () => {
      const store = createRedisLedgerStore({
        redis: redisUrl,
        keyPrefix: `${run}unversioned:`,
        purgeIntervalMs: 0,
      });
      await admin.hset(`${run}unversioned:i:k`, {
        key: 'k',
        fingerprint: 'f',
        entry: 'e',
        createdAt: '1',
        expiresAt: '9999999999999',
      });
      const old = {
        key: 'k',
        fingerprint: 'f',
        entry: 'e',
        version: 1,
        createdAt: 1,
        expiresAt: 9999999999999,
      };
      expect(await store.getIdentifier('k')).toEqual(old);
      const next = { key: 'k', fingerprint: 'g', entry: 'n', createdAt: 2, expiresAt: 9999999999999 };
      expect(await store.bindIdentifier(next, { entry: 'e', version: 2 })).toEqual({
        bound: false,
        binding: old,
      });
      expect(await store.bindIdentifier(next, { entry: 'e', version: 1 })).toEqual({
        bound: true,
        binding: { ...next, version: 2 },
      });
      await store.close();
    });

    it('finds no entry by any query once Redis has expired it, and purges what it left behind', async () => {
      const store = createRedisLedgerStore({ redis: redisUrl, keyPrefix: `${run}gone:`, purgeIntervalMs: 0 });
      const kept = buildEntry({ state: 'rejected', createdAt: Date.now() - 1 });
      const gone = buildEntry({ state: 'rejected' });
      await store.claim(kept);
      await store.claim(gone);
      expect(await admin.pexpireat(`${run}gone:e:${gone.id}`, Date.now() - 1)).toBe(1);
      expect(await store.query({})).toEqual([kept]);
      expect(await store.query({ state: 'rejected' })).toEqual([kept]);
      expect(await store.query({ payer: '0xpayer' })).toEqual([kept]);
      expect(await store.query({ transaction: '0xtx' })).toEqual([kept]);
      expect(await store.query({ id: gone.id })).toEqual([]);
      // Its index members go with the next purge, the kept entry's stay.
      expect(await store.purgeExpired(gone.expiresAt + 1)).toBe(1);
      expect(await admin.zrange(`${run}gone:created`, 0, -1)).toEqual([]);
      await store.close();
    });

    it('pages through an index of more than 200 members, skipping those whose entries are gone', async () => {
      const store = createRedisLedgerStore({
        redis: redisUrl,
        keyPrefix: `${run}pages:`,
        purgeIntervalMs: 0,
      });
      const t = Date.now();
      const entries = Array.from({ length: 250 }, (_, i) =>
        buildEntry({ id: `page-${String(i).padStart(3, '0')}`, state: 'rejected', createdAt: t - i }),
      );
      await Promise.all(entries.map((entry) => store.claim(entry)));
      // Redis expires every tenth entry (25 in all, some on each page).
      const gone = entries.filter((_, i) => i % 10 === 5);
      for (const entry of gone) await admin.pexpireat(`${run}pages:e:${entry.id}`, Date.now() - 1);
      const left = entries.filter((_, i) => i % 10 !== 5).map((e) => e.id);
      for (const query of [
        {},
        { payer: '0xpayer' },
        { transaction: '0xtx' },
        { state: 'rejected' as const },
      ]) {
        expect((await store.query({ ...query, limit: 1_000 })).map((e) => e.id)).toEqual(left);
        expect((await store.query({ ...query, limit: 210 })).map((e) => e.id)).toEqual(left.slice(0, 210));
        expect((await store.query({ ...query, limit: 180 })).map((e) => e.id)).toEqual(left.slice(0, 180));
      }
      await store.close();
    });

    it('purges more than one batch of 500 expired entries in one call', async () => {
      const store = createRedisLedgerStore({
        redis: redisUrl,
        keyPrefix: `${run}batch:`,
        purgeIntervalMs: 0,
      });
      const expiresAt = Date.now() + 60_000;
      const entries = Array.from({ length: 501 }, () => buildEntry({ state: 'rejected', expiresAt }));
      await Promise.all(entries.map((entry) => store.claim(entry)));
      expect(await store.purgeExpired(expiresAt + 1)).toBe(501);
      expect(await admin.zcard(`${run}batch:expires`)).toBe(0);
      expect(await store.query({ limit: 1_000 })).toEqual([]);
      await store.close();
    });

    it('purges the index members of expired entries on its own every purgeIntervalMs', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const client = new Redis(redisUrl);
      const store = createRedisLedgerStore({
        redis: client,
        keyPrefix: `${run}timed:`,
        purgeIntervalMs: 1_000,
      });
      // Loads the purge script, so the timer's round is one EVALSHA on this connection.
      await store.purgeExpired(0);
      await store.claim(buildEntry({ state: 'rejected', expiresAt: Date.now() - 1 }));
      // Already expired: Redis dropped the entry at once, its index members wait for a purge.
      expect(await client.zcard(`${run}timed:expires`)).toBe(1);
      vi.advanceTimersByTime(999);
      expect(await client.zcard(`${run}timed:expires`)).toBe(1);
      vi.advanceTimersByTime(1);
      // Commands of one connection run in order: the purge round's EVALSHA was sent first.
      expect(await client.zcard(`${run}timed:expires`)).toBe(0);
      await store.close();
      await client.quit();
    });

    it('loads its scripts again after Redis has forgotten them, and only then sends them whole', async () => {
      const client = new Redis(redisUrl);
      const store = createRedisLedgerStore({ redis: client, keyPrefix: `${run}flush:`, purgeIntervalMs: 0 });
      const sent = vi.spyOn(client, 'eval');
      await admin.script('FLUSH');
      const entry = buildEntry({ state: 'claimed' });
      expect((await store.claim(entry)).acquired).toBe(true);
      expect((await store.claim(buildEntry({ state: 'claimed' }))).acquired).toBe(true);
      expect((await store.claim(entry)).acquired).toBe(false);
      expect((await store.update(entry.id, { state: ['claimed'] }, { state: 'verified' }))?.state).toBe(
        'verified',
      );
      expect(await store.remove(entry.id, { state: ['verified'] })).toBe(true);
      // At most one full script per script Redis did not know (claim, update, remove), none after
      // that (fewer if another client loaded one of them meanwhile).
      expect(sent.mock.calls.length).toBeLessThanOrEqual(3);
      await store.close();
      await client.quit();
    });

    it('does not send a script again when it failed for another reason than being unknown', async () => {
      const client = new Redis(redisUrl);
      const store = createRedisLedgerStore({
        redis: client,
        keyPrefix: `${run}wrongtype:`,
        purgeIntervalMs: 0,
      });
      await store.claim(buildEntry());
      const sent = vi.spyOn(client, 'eval');
      // Not a hash where the entry should be: the claim script's HGETALL fails inside Redis.
      await admin.set(`${run}wrongtype:e:clash`, 'a string');
      await expect(store.claim(buildEntry({ id: 'clash' }))).rejects.toThrow(/WRONGTYPE/);
      expect(sent).not.toHaveBeenCalled();
      await store.close();
      await client.quit();
    });

    it('closes the connection it opened', async () => {
      const name = `tollbooth-owned-${randomBytes(4).toString('hex')}`;
      const url = new URL(redisUrl);
      url.searchParams.set('connectionName', name);
      const store = createRedisLedgerStore({
        redis: url.toString(),
        keyPrefix: `${run}owned:`,
        purgeIntervalMs: 0,
      });
      expect(await store.get('x')).toBeUndefined();
      expect(await admin.client('LIST')).toContain(` name=${name} `);
      await store.close();
      expect(await admin.client('LIST')).not.toContain(` name=${name} `);
    });

    it('reports the error Redis gives for an indexed entry whose key holds no hash', async () => {
      const store = createRedisLedgerStore({
        redis: redisUrl,
        keyPrefix: `${run}notahash:`,
        purgeIntervalMs: 0,
      });
      const entry = buildEntry({ state: 'rejected' });
      await store.claim(entry);
      await admin.del(`${run}notahash:e:${entry.id}`);
      await admin.set(`${run}notahash:e:${entry.id}`, 'a string');
      await expect(store.query({ state: 'rejected' })).rejects.toThrow(/^WRONGTYPE/);
      await store.close();
    });

    it('reports each outage of its own connection once, and the next one after it came back', async () => {
      // A relay to Redis that the test cuts and restores: two outages, one warning each.
      const url = new URL(redisUrl);
      const sockets = new Set<Socket>();
      const relay = createServer((incoming) => {
        const upstream = netConnect(Number(url.port || 6379), url.hostname);
        for (const socket of [incoming, upstream]) {
          sockets.add(socket);
          socket.on('error', () => {});
          socket.on('close', () => sockets.delete(socket));
        }
        incoming.pipe(upstream).pipe(incoming);
        incoming.on('close', () => upstream.destroy());
        upstream.on('close', () => incoming.destroy());
      });
      relay.listen(0, '127.0.0.1');
      await once(relay, 'listening');
      const port = (relay.address() as AddressInfo).port;
      const warnings: string[] = [];
      let warned: () => void = () => {};
      const store = createRedisLedgerStore({
        redis: `redis://127.0.0.1:${port}`,
        keyPrefix: `${run}relay:`,
        purgeIntervalMs: 0,
        logger: {
          warn(_fields, message) {
            warnings.push(message);
            warned();
          },
        },
      });
      const cut = async () => {
        const warning = new Promise<void>((resolve) => {
          warned = resolve;
        });
        relay.close();
        for (const socket of sockets) socket.destroy();
        await warning;
      };
      try {
        expect(await store.get('x')).toBeUndefined();
        await cut();
        relay.listen(port, '127.0.0.1');
        await once(relay, 'listening');
        // Answered once the store's connection is back (its commands wait for it meanwhile).
        expect(await store.get('x')).toBeUndefined();
        await cut();
        expect(warnings).toEqual([
          'Redis ledger connection failed; reconnecting',
          'Redis ledger connection failed; reconnecting',
        ]);
      } finally {
        await store.close().catch(() => {});
        relay.close();
        for (const socket of sockets) socket.destroy();
      }
    });

    it('honours the keyPrefix of a client it is given and leaves that client open', async () => {
      const client = new Redis(redisUrl, { keyPrefix: `${run}client:` });
      const store = createRedisLedgerStore({ redis: client, keyPrefix: 'ledger:', purgeIntervalMs: 0 });
      const entry = buildEntry();
      await store.claim(entry);
      expect(await store.get(entry.id)).toEqual(entry);
      expect((await store.update(entry.id, { state: ['settled'] }, { state: 'rejected' }))?.state).toBe(
        'rejected',
      );
      expect((await store.query({ state: 'rejected' })).map((e) => e.id)).toEqual([entry.id]);
      expect(await admin.exists(`${run}client:ledger:e:${entry.id}`)).toBe(1);
      await store.close();
      expect(await client.ping()).toBe('PONG');
      await expect(store.get(entry.id)).rejects.toMatchObject({ code: 'ledger_unavailable' });
      await client.quit();
    });
  });
});
