import { createHash } from 'node:crypto';
import {
  type AccessStore,
  type BindResult,
  type ClaimResult,
  type GateLogger,
  LEDGER_ERROR_STATUS,
  type LedgerEntry,
  type LedgerExpectation,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerStore,
  type NewIdentifierBinding,
  type PaymentIdentity,
  type ReplacedBinding,
  type ReservationStore,
  TollboothError,
} from '@tollbooth/core';
import {
  assertLedgerInvariant,
  LEDGER_QUERY_DEFAULT_LIMIT,
  settlesWithStoredResponse,
} from '@tollbooth/core/ledger';
import { Redis } from 'ioredis';
import { createRedisAccess } from './redis-access';
import { decodeBinding, decodeFields, encodeFields, fromFlat } from './redis-fields';
import { createRedisReservations } from './redis-reservations';
import { BIND_IDENTIFIER_SCRIPT, CLAIM_SCRIPT, PURGE_SCRIPT, REMOVE_SCRIPT, UPDATE_SCRIPT } from './scripts';

/** Options of {@link createRedisLedgerStore}. */
export interface RedisLedgerStoreOptions {
  /**
   * An ioredis client to use (never closed by the store, and left unmodified: no commands are
   * defined on it), or a `redis://` URL for a connection the store opens and closes.
   */
  redis: Redis | string;
  /** Prefix of every key the store writes (after the client's own `keyPrefix`, if any). */
  keyPrefix?: string;
  /** How often expired entries' index members are purged, in ms; `0` turns it off. The timer is unref'd. */
  purgeIntervalMs?: number;
  /**
   * Where the store reports what no caller sees: the connection errors of a client it opened (the
   * first of each outage) and failed background purges. pino-compatible. Default: nowhere; the
   * store never writes to the console.
   */
  logger?: Pick<GateLogger, 'warn'>;
}

/** Defaults of {@link RedisLedgerStoreOptions}. */
export const REDIS_LEDGER_STORE_DEFAULTS: Readonly<{ keyPrefix: string; purgeIntervalMs: number }> =
  Object.freeze({
    keyPrefix: 'tollbooth:ledger:',
    purgeIntervalMs: 60_000,
  });

const PURGE_BATCH = 500;
const QUERY_PAGE = 200;

function newerFirst(a: LedgerEntry, b: LedgerEntry): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function expectationArgs(expect: LedgerExpectation): string[] {
  return [
    expect.owner === undefined ? '0' : '1',
    expect.owner ?? '',
    String(expect.state.length),
    ...expect.state,
  ];
}

function resolveOptions(options: RedisLedgerStoreOptions) {
  const given = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  const resolved = { ...REDIS_LEDGER_STORE_DEFAULTS, ...given } as typeof REDIS_LEDGER_STORE_DEFAULTS &
    RedisLedgerStoreOptions;
  const problems: string[] = [];
  if (typeof resolved.redis === 'string') {
    if (!/^rediss?:\/\//.test(resolved.redis))
      problems.push('redis must be a redis:// or rediss:// URL or a client');
  } else if (typeof (resolved.redis as Partial<Redis> | undefined)?.evalsha !== 'function') {
    problems.push('redis must be an ioredis client or a redis:// URL');
  }
  if (typeof resolved.keyPrefix !== 'string' || resolved.keyPrefix === '') {
    problems.push('keyPrefix must be a non-empty string');
  }
  if (resolved.logger !== undefined && typeof resolved.logger?.warn !== 'function') {
    problems.push('logger must have a warn(fields, message) method (pino-compatible)');
  }
  if (!Number.isSafeInteger(resolved.purgeIntervalMs) || resolved.purgeIntervalMs < 0) {
    problems.push(`purgeIntervalMs must be a non-negative integer (got ${String(resolved.purgeIntervalMs)})`);
  }
  if (problems.length > 0) {
    throw new TollboothError('invalid_config', `Invalid Redis ledger store options: ${problems.join('; ')}`);
  }
  return resolved;
}

/**
 * Creates a {@link LedgerStore} in Redis (ioredis), for several instances sharing one Redis.
 * A claim and every compare-and-set run as Lua scripts (EVALSHA), so the check, the write and
 * the index updates are one atomic step. Each entry is a hash (body base64, JSON fields as JSON
 * text) that Redis deletes itself at `expiresAt` (PEXPIREAT); sorted sets index entries by state,
 * transaction, payer and creation time, and `purgeExpired` removes the index members of expired
 * entries. Targets a single Redis (standalone or Sentinel), not Redis Cluster.
 *
 * @param options - `redis` (client or URL); `keyPrefix` (default `tollbooth:ledger:`),
 *   `purgeIntervalMs` (default 60 000, 0 = off).
 * @throws {TollboothError} `invalid_config`, listing every problem.
 * @example
 * ```ts
 * import { createRedisLedgerStore } from '@tollbooth/store-redis';
 *
 * const ledger = createRedisLedgerStore({ redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
 * // … pass `ledger` to the gate; on shutdown:
 * await ledger.close();
 * ```
 */
export function createRedisLedgerStore(
  options: RedisLedgerStoreOptions,
): LedgerStore & AccessStore & ReservationStore {
  const resolved = resolveOptions(options);
  const owned = typeof resolved.redis === 'string';
  const redis = typeof resolved.redis === 'string' ? new Redis(resolved.redis) : resolved.redis;
  const logger = resolved.logger;
  if (owned) {
    // Without an error listener ioredis prints every failed reconnect to the console. Commands
    // report their own failures; the logger hears the first error of each outage.
    let reported = false;
    redis.on('error', (error: Error) => {
      if (reported) return;
      reported = true;
      logger?.warn(
        { err: error, code: 'ledger_unavailable' },
        'Redis ledger connection failed; reconnecting',
      );
    });
    redis.on('ready', () => {
      reported = false;
    });
  }
  // ioredis adds the client's own keyPrefix to plain commands' keys, but scripts derive their keys
  // from ARGV: they get the whole prefix.
  const prefix = resolved.keyPrefix;
  const scriptPrefix = (redis.options.keyPrefix ?? '') + prefix;

  const shas = new Map<string, string>();
  const run = async <T>(script: string, args: string[]): Promise<T> => {
    let sha = shas.get(script);
    if (!sha) {
      sha = createHash('sha1').update(script).digest('hex');
      shas.set(script, sha);
    }
    try {
      return (await redis.evalsha(sha, 0, ...args)) as T;
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await redis.eval(script, 0, ...args)) as T;
    }
  };

  let closed = false;
  const assertOpen = () => {
    if (closed) throw new TollboothError('ledger_unavailable', 'The Redis ledger store is closed');
  };

  const access = createRedisAccess({ redis, prefix, scriptPrefix, run, assertOpen });
  const reservations = createRedisReservations({ redis, prefix, scriptPrefix, run, assertOpen });
  const purge = async (now: number): Promise<number> => {
    assertOpen();
    let purged = 0;
    for (;;) {
      const [deleted, examined] = await run<[number, number]>(PURGE_SCRIPT, [
        scriptPrefix,
        String(now),
        String(PURGE_BATCH),
      ]);
      purged += deleted;
      if (examined < PURGE_BATCH) return purged + (await access.purge(now));
    }
  };

  /** Newest-first matches from one index, paging past members whose entries are gone. */
  const scan = async (
    key: string,
    limit: number,
    matches: (entry: LedgerEntry) => boolean,
  ): Promise<LedgerEntry[]> => {
    const found: LedgerEntry[] = [];
    for (let start = 0; found.length < limit; start += QUERY_PAGE) {
      const ids = await redis.zrevrange(key, start, start + QUERY_PAGE - 1);
      if (ids.length === 0) break;
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hgetall(`${prefix}e:${id}`);
      const results = (await pipeline.exec()) ?? [];
      for (const [error, fields] of results) {
        if (error) throw error;
        const record = fields as Record<string, string>;
        if (record.id === undefined) continue;
        const entry = decodeFields(record);
        if (matches(entry)) found.push(entry);
        if (found.length === limit) break;
      }
      if (ids.length < QUERY_PAGE) break;
    }
    return found;
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  if (resolved.purgeIntervalMs > 0) {
    timer = setInterval(() => {
      // A failed round is harmless: the next one (or an explicit purgeExpired) tries again.
      purge(Date.now()).catch((error: unknown) =>
        logger?.warn({ err: error, code: 'ledger_unavailable' }, 'ledger purge round failed'),
      );
    }, resolved.purgeIntervalMs);
    timer.unref();
  }

  return {
    async claim(entry: LedgerEntry): Promise<ClaimResult> {
      assertOpen();
      assertLedgerInvariant(entry);
      const [acquired, flat] = await run<[number, string[]]>(CLAIM_SCRIPT, [
        scriptPrefix,
        entry.id,
        ...encodeFields(entry),
      ]);
      return { acquired: acquired === 1, entry: decodeFields(fromFlat(flat)) };
    },

    async bindIdentifier(binding: NewIdentifierBinding, replaces?: ReplacedBinding): Promise<BindResult> {
      assertOpen();
      const [bound, flat] = await run<[number, string[]]>(BIND_IDENTIFIER_SCRIPT, [
        scriptPrefix,
        binding.key,
        binding.fingerprint,
        binding.entry,
        String(binding.createdAt),
        String(binding.expiresAt),
        replaces?.entry ?? '',
        String(replaces?.version ?? 0),
      ]);
      const found = decodeBinding(fromFlat(flat));
      // Empty only when the binding was stored already expired (Redis deleted it at once); a
      // refusal always reads the binding in the way.
      if (bound === 1) return { bound: true, binding: found ?? { ...binding, version: 1 } };
      return { bound: false, binding: found! };
    },

    async getIdentifier(key: string) {
      assertOpen();
      return decodeBinding(await redis.hgetall(`${prefix}i:${key}`));
    },

    async get(id: PaymentIdentity) {
      assertOpen();
      const fields = await redis.hgetall(`${prefix}e:${id}`);
      return fields.id === undefined ? undefined : decodeFields(fields);
    },

    async update(id: PaymentIdentity, expect: LedgerExpectation, patch: LedgerPatch) {
      assertOpen();
      assertLedgerInvariant(patch);
      const {
        id: _id,
        createdAt: _c,
        updatedAt: _u,
        ...fields
      } = patch as LedgerPatch & Partial<LedgerEntry>;
      const flat = await run<string[] | null>(UPDATE_SCRIPT, [
        scriptPrefix,
        id,
        ...expectationArgs(expect),
        String(settlesWithStoredResponse(patch) ? LEDGER_ERROR_STATUS : 0),
        ...encodeFields({ ...fields, updatedAt: Date.now() }),
      ]);
      return flat ? decodeFields(fromFlat(flat)) : undefined;
    },

    async remove(id: PaymentIdentity, expect: LedgerExpectation) {
      assertOpen();
      return (await run<number>(REMOVE_SCRIPT, [scriptPrefix, id, ...expectationArgs(expect)])) === 1;
    },

    async query(query: LedgerQuery) {
      assertOpen();
      const limit = query.limit ?? LEDGER_QUERY_DEFAULT_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 0) {
        throw new TollboothError('invalid_config', `limit must be a non-negative integer (got ${limit})`);
      }
      const states =
        query.state === undefined
          ? undefined
          : typeof query.state === 'string'
            ? [query.state]
            : [...query.state];
      const matches = (entry: LedgerEntry) =>
        (query.id === undefined || entry.id === query.id) &&
        (states === undefined || states.includes(entry.state)) &&
        (query.transaction === undefined || entry.transaction === query.transaction) &&
        (query.payer === undefined || entry.payer === query.payer) &&
        (query.leaseUntilBefore === undefined || entry.leaseUntil < query.leaseUntilBefore);
      if (limit === 0 || states?.length === 0) return [];

      let found: LedgerEntry[];
      if (query.id !== undefined) {
        const fields = await redis.hgetall(`${prefix}e:${query.id}`);
        found = fields.id !== undefined && matches(decodeFields(fields)) ? [decodeFields(fields)] : [];
      } else if (query.transaction !== undefined) {
        found = await scan(`${prefix}tx:${query.transaction}`, limit, matches);
      } else if (query.payer !== undefined) {
        found = await scan(`${prefix}payer:${query.payer}`, limit, matches);
      } else if (states !== undefined) {
        // The newest `limit` of the union are among the newest `limit` of each state.
        const perState = await Promise.all(
          [...new Set(states)].map((state) => scan(`${prefix}state:${state}`, limit, matches)),
        );
        found = perState.flat();
      } else {
        found = await scan(`${prefix}created`, limit, matches);
      }
      return found.sort(newerFirst).slice(0, limit);
    },

    grantAccess: access.grantAccess,
    useAccess: access.useAccess,
    returnAccess: access.returnAccess,
    claimNonce: access.claimNonce,
    queryAccess: access.queryAccess,
    ...reservations,
    purgeExpired: purge,

    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      if (owned) await redis.quit();
    },
  };
}
