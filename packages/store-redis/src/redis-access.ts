// The Redis ledger store's sign-in part: access grants and nonce claims (docs/sign-in-with-x.md).
//
// Keys, under the store's prefix `P`:
// - `P a:<payment>`   hash: a grant's fields; PEXPIREAT its expiresAt (none while a grant without a
//                     time pass has uses left)
// - `P as:<sha1>`     set of the payments granting one subject (route, network, payer); members whose
//                     grant is gone are dropped by the next use
// - `P access`        sorted set of all grants by grantedAt (operators' listing)
// - `P aexp`          sorted set of grants by expiresAt (purge)
// - `P n:<nonce>`     a nonce claim, SET NX with PXAT its expiresAt: Redis ends it itself
import type { AccessGrant, AccessQuery, AccessStore, AccessUse, PaymentIdentity } from '@tollbooth/core';
import { accessQueryLimit, newerGrantFirst } from '@tollbooth/core/ledger';
import type { Redis } from 'ioredis';

/** Records a grant unless one exists for its payment; returns the stored grant. */
export const GRANT_ACCESS_SCRIPT = `
local P, id = ARGV[1], ARGV[2]
local key = P .. 'a:' .. id
if redis.call('EXISTS', key) == 0 then
  redis.call('HSET', key, unpack(ARGV, 3))
  local f = redis.call('HMGET', key, 'route', 'network', 'payer', 'grantedAt', 'expiresAt')
  redis.call('SADD', P .. 'as:' .. redis.sha1hex(f[1] .. '\\n' .. f[2] .. '\\n' .. f[3]), id)
  redis.call('ZADD', P .. 'access', f[4], id)
  if f[5] then
    redis.call('ZADD', P .. 'aexp', f[5], id)
    redis.call('PEXPIREAT', key, f[5])
  end
end
return redis.call('HGETALL', key)
`;

/**
 * Takes one use of the grant of a subject that holds at ARGV[5] and is used first (the pass ending
 * soonest, counted uses, the oldest, the payment id); returns it after the use, or false.
 */
export const USE_ACCESS_SCRIPT = `
local P, at, keep = ARGV[1], tonumber(ARGV[5]), ARGV[6]
local sk = P .. 'as:' .. redis.sha1hex(ARGV[2] .. '\\n' .. ARGV[3] .. '\\n' .. ARGV[4])
local best, bestEnd, bestOpen, bestGranted
for _, id in ipairs(redis.call('SMEMBERS', sk)) do
  local f = redis.call('HMGET', P .. 'a:' .. id, 'validUntil', 'uses', 'used', 'grantedAt')
  if not f[4] then
    redis.call('SREM', sk, id)
  else
    local ends = tonumber(f[1]) or math.huge
    local uses, used = tonumber(f[2]), tonumber(f[3])
    if at < ends and (uses == nil or used < uses) then
      local open, granted = (uses == nil) and 1 or 0, tonumber(f[4])
      local better = best == nil or ends < bestEnd or (ends == bestEnd and (open < bestOpen or
        (open == bestOpen and (granted < bestGranted or (granted == bestGranted and id < best)))))
      if better then best, bestEnd, bestOpen, bestGranted = id, ends, open, granted end
    end
  end
end
if not best then return false end
local key = P .. 'a:' .. best
local used = redis.call('HINCRBY', key, 'used', 1)
redis.call('HSET', key, 'lastUsedAt', ARGV[5])
local f = redis.call('HMGET', key, 'uses', 'expiresAt')
if f[1] and used >= tonumber(f[1]) and not f[2] then
  redis.call('HSET', key, 'expiresAt', keep)
  redis.call('ZADD', P .. 'aexp', keep, best)
  redis.call('PEXPIREAT', key, keep)
end
return redis.call('HGETALL', key)
`;

/** Gives back a use; a grant without a time pass is kept again. Returns 1, or 0 when there was none. */
export const RETURN_ACCESS_SCRIPT = `
local P, id = ARGV[1], ARGV[2]
local key = P .. 'a:' .. id
local f = redis.call('HMGET', key, 'used', 'validUntil')
if not f[1] or tonumber(f[1]) <= 0 then return 0 end
redis.call('HINCRBY', key, 'used', -1)
if not f[2] then
  redis.call('HDEL', key, 'expiresAt')
  redis.call('ZREM', P .. 'aexp', id)
  redis.call('PERSIST', key)
end
return 1
`;

/**
 * Deletes up to ARGV[3] grants that expired before ARGV[2]; returns how many grants it deleted and
 * how many it looked at.
 */
export const PURGE_ACCESS_SCRIPT = `
local P = ARGV[1]
local deleted = 0
local ids = redis.call('ZRANGEBYSCORE', P .. 'aexp', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  local key = P .. 'a:' .. id
  local f = redis.call('HMGET', key, 'route', 'network', 'payer')
  if f[1] then
    redis.call('SREM', P .. 'as:' .. redis.sha1hex(f[1] .. '\\n' .. f[2] .. '\\n' .. f[3]), id)
    redis.call('DEL', key)
    deleted = deleted + 1
  end
  redis.call('ZREM', P .. 'access', id)
  redis.call('ZREM', P .. 'aexp', id)
end
return {deleted, #ids}
`;

const NUMBER_FIELDS = ['grantedAt', 'validUntil', 'uses', 'used', 'lastUsedAt', 'expiresAt'] as const;

/** A grant as hash fields (name, value, …); absent fields are left out. */
function encodeGrant(grant: AccessGrant): string[] {
  const flat: string[] = [];
  for (const [name, value] of Object.entries(grant)) {
    if (value !== undefined) flat.push(name, String(value));
  }
  return flat;
}

/** The grant a hash holds (HGETALL as an object or a flat list), or `undefined` when it is gone. */
function decodeGrant(fields: Record<string, string> | string[] | null): AccessGrant | undefined {
  if (!fields) return undefined;
  const record: Record<string, string> = Array.isArray(fields) ? {} : fields;
  if (Array.isArray(fields)) for (let i = 0; i < fields.length; i += 2) record[fields[i]!] = fields[i + 1]!;
  if (record['payment'] === undefined) return undefined;
  const grant: Record<string, string | number> = { ...record };
  for (const name of NUMBER_FIELDS) if (record[name] !== undefined) grant[name] = Number(record[name]);
  return grant as unknown as AccessGrant;
}

const QUERY_PAGE = 200;
const PURGE_BATCH = 500;

/** The sign-in methods of the Redis store, and its purge of grants (nonce claims expire in Redis). */
export function createRedisAccess(context: {
  redis: Redis;
  /** The store's prefix for plain commands (the client adds its own keyPrefix). */
  prefix: string;
  /** The whole prefix, for scripts. */
  scriptPrefix: string;
  run: <T>(script: string, args: string[]) => Promise<T>;
  assertOpen: () => void;
}): AccessStore & { purge(now: number): Promise<number> } {
  const { redis, prefix, scriptPrefix, run, assertOpen } = context;
  return {
    async grantAccess(grant: AccessGrant): Promise<AccessGrant> {
      assertOpen();
      const flat = await run<string[]>(GRANT_ACCESS_SCRIPT, [
        scriptPrefix,
        grant.payment,
        ...encodeGrant(grant),
      ]);
      // Empty only when the grant was stored already expired (Redis deleted it at once).
      return decodeGrant(flat) ?? { ...grant };
    },

    async useAccess(use: AccessUse): Promise<AccessGrant | undefined> {
      assertOpen();
      const flat = await run<string[] | null>(USE_ACCESS_SCRIPT, [
        scriptPrefix,
        use.route,
        use.network,
        use.payer,
        String(use.at),
        String(use.keepUntil),
      ]);
      return decodeGrant(flat);
    },

    async returnAccess(payment: PaymentIdentity): Promise<boolean> {
      assertOpen();
      return (await run<number>(RETURN_ACCESS_SCRIPT, [scriptPrefix, payment])) === 1;
    },

    async claimNonce(nonce: string, expiresAt: number): Promise<boolean> {
      assertOpen();
      // A claim whose time has passed is gone from Redis: the nonce can be claimed again.
      const at = Math.max(expiresAt, Date.now() + 1);
      return (await redis.set(`${prefix}n:${nonce}`, '1', 'PXAT', at, 'NX')) === 'OK';
    },

    async queryAccess(query: AccessQuery): Promise<AccessGrant[]> {
      assertOpen();
      const limit = accessQueryLimit(query);
      const matches = (grant: AccessGrant) =>
        (query.payment === undefined || grant.payment === query.payment) &&
        (query.payer === undefined || grant.payer === query.payer) &&
        (query.route === undefined || grant.route === query.route);
      if (limit === 0) return [];
      if (query.payment !== undefined) {
        const grant = decodeGrant(await redis.hgetall(`${prefix}a:${query.payment}`));
        return grant && matches(grant) ? [grant] : [];
      }
      const found: AccessGrant[] = [];
      for (let start = 0; found.length < limit; start += QUERY_PAGE) {
        const ids = await redis.zrevrange(`${prefix}access`, start, start + QUERY_PAGE - 1);
        if (ids.length === 0) break;
        const pipeline = redis.pipeline();
        for (const id of ids) pipeline.hgetall(`${prefix}a:${id}`);
        for (const [error, fields] of (await pipeline.exec()) ?? []) {
          if (error) throw error;
          const grant = decodeGrant(fields as Record<string, string>);
          if (grant && matches(grant)) found.push(grant);
        }
        if (ids.length < QUERY_PAGE) break;
      }
      return found.sort(newerGrantFirst).slice(0, limit);
    },

    async purge(now: number): Promise<number> {
      let purged = 0;
      for (;;) {
        const [deleted, examined] = await run<[number, number]>(PURGE_ACCESS_SCRIPT, [
          scriptPrefix,
          String(now),
          String(PURGE_BATCH),
        ]);
        purged += deleted;
        if (examined < PURGE_BATCH) return purged;
      }
    },
  };
}
