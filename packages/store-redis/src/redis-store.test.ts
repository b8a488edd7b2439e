import { randomBytes } from 'node:crypto';
import type { LedgerEntry } from '@tollbooth/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisLedgerStore } from './redis-store';

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

describe('createRedisLedgerStore', () => {
  it('reports every invalid option at once', () => {
    expect(() =>
      createRedisLedgerStore({ redis: 'http://nope', keyPrefix: '', purgeIntervalMs: -1 } as never),
    ).toThrow(/redis must be.*keyPrefix.*purgeIntervalMs/);
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

    it('writes under tollbooth:ledger: by default', async () => {
      // The run's own namespace is the client's prefix; the store adds its default one after it.
      const client = new Redis(redisUrl, { keyPrefix: `${run}default:` });
      const store = createRedisLedgerStore({ redis: client, purgeIntervalMs: 0 });
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
