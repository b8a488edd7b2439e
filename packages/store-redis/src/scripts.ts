/**
 * Lua scripts of the Redis ledger store. Each runs atomically inside Redis, so a claim or a state
 * change and the index updates it implies happen together or not at all.
 *
 * Keys, under the store's prefix `P`:
 * - `P e:<id>`          hash: the entry's fields (see `encodeFields` in redis-store.ts); PEXPIREAT expiresAt,
 *                        none while it is kept (settling, uncertain, or settled without its answer)
 * - `P created`         sorted set of all ids, scored by createdAt (newest-first listing)
 * - `P expires`         sorted set of all ids, scored by expiresAt (purge; +inf while kept)
 * - `P state:<state>`   sorted set per state, scored by createdAt
 * - `P tx:<hash>`       sorted set per transaction hash, scored by createdAt
 * - `P payer:<payer>`   sorted set per payer, scored by createdAt
 * - `P refs:tx`, `P refs:payer`  hashes id → transaction / payer, so the indexes of an entry that
 *                        Redis already expired can still be cleaned.
 * - `P i:<key>`         hash: a payment-identifier binding; PEXPIREAT its expiresAt, none while the
 *                        entry it names is kept (the binding follows its entry)
 * - `P refs:identifier` hash id → the key of the binding naming that entry
 *
 * The keys are derived inside the scripts (the prefix is ARGV[1]): the store targets a single Redis
 * (standalone or Sentinel), not Redis Cluster.
 */

const HELPERS = `
local STATES = {'claimed', 'verified', 'settling', 'settled', 'rejected', 'uncertain'}

local function unindex(P, id)
  redis.call('ZREM', P .. 'created', id)
  redis.call('ZREM', P .. 'expires', id)
  for _, s in ipairs(STATES) do redis.call('ZREM', P .. 'state:' .. s, id) end
  local tx = redis.call('HGET', P .. 'refs:tx', id)
  if tx then
    redis.call('ZREM', P .. 'tx:' .. tx, id)
    redis.call('HDEL', P .. 'refs:tx', id)
  end
  local payer = redis.call('HGET', P .. 'refs:payer', id)
  if payer then
    redis.call('ZREM', P .. 'payer:' .. payer, id)
    redis.call('HDEL', P .. 'refs:payer', id)
  end
end

-- Never expires while kept (docs/ledger.md#purging): a settled entry without its answer (its payer
-- is served whenever it retries) and a settling or uncertain one (the reconciler resolves it).
local function kept(state, response)
  if state == 'settling' or state == 'uncertain' then return true end
  return state == 'settled' and not response
end

-- The binding naming an entry lives as long as the entry is kept: no expiry while it is, its own
-- expiresAt again once it is not (a retry under the same identifier must find the entry).
local function follow(bk, id, keep)
  local b = redis.call('HMGET', bk, 'entry', 'expiresAt')
  if b[1] ~= id then return end
  if keep then redis.call('PERSIST', bk) else redis.call('PEXPIREAT', bk, b[2]) end
end

local function index(P, id, key)
  local f = redis.call('HMGET', key, 'state', 'createdAt', 'expiresAt', 'transaction', 'payer', 'response')
  local keep = kept(f[1], f[6])
  redis.call('ZADD', P .. 'created', f[2], id)
  redis.call('ZADD', P .. 'expires', keep and '+inf' or f[3], id)
  redis.call('ZADD', P .. 'state:' .. f[1], f[2], id)
  if f[4] then
    redis.call('ZADD', P .. 'tx:' .. f[4], f[2], id)
    redis.call('HSET', P .. 'refs:tx', id, f[4])
  end
  if f[5] then
    redis.call('ZADD', P .. 'payer:' .. f[5], f[2], id)
    redis.call('HSET', P .. 'refs:payer', id, f[5])
  end
  if keep then redis.call('PERSIST', key) else redis.call('PEXPIREAT', key, f[3]) end
  local bound = redis.call('HGET', P .. 'refs:identifier', id)
  if bound then follow(P .. 'i:' .. bound, id, keep) end
end

-- ARGV from 'first': hasOwner ('1'/'0'), owner, n, state1 .. stateN. Returns whether the
-- expectation holds for the entry at key, and the index of the first ARGV after it.
local function holds(key, first)
  local n = tonumber(ARGV[first + 2])
  local after = first + 3 + n
  local current = redis.call('HMGET', key, 'state', 'owner')
  if not current[1] then return false, after end
  if ARGV[first] == '1' and current[2] ~= ARGV[first + 1] then return false, after end
  for i = first + 3, first + 2 + n do
    if ARGV[i] == current[1] then return true, after end
  end
  return false, after
end

local function setFields(key, from)
  local fields = {}
  for i = from, #ARGV do fields[#fields + 1] = ARGV[i] end
  if #fields > 0 then redis.call('HSET', key, unpack(fields)) end
end
`;

/** ARGV: prefix, id, field, value, … → `{1|0, flat HGETALL}`. */
export const CLAIM_SCRIPT = `${HELPERS}
local P, id = ARGV[1], ARGV[2]
local key = P .. 'e:' .. id
if redis.call('EXISTS', key) == 1 then
  return {0, redis.call('HGETALL', key)}
end
-- Index members left behind by an entry Redis expired on its own.
unindex(P, id)
setFields(key, 3)
-- Read before indexing: an expiresAt already past makes PEXPIREAT delete the entry at once.
local entry = redis.call('HGETALL', key)
index(P, id, key)
return {1, entry}
`;

/**
 * ARGV: prefix, id, hasOwner, owner, n, states…, errorStatus, field, value, … → flat HGETALL, or
 * nil. `errorStatus` > 0: the update also needs the stored response (if any) to be below it (a patch
 * to settled that keeps the stored response, see the ledger invariant).
 */
export const UPDATE_SCRIPT = `${HELPERS}
local P, id = ARGV[1], ARGV[2]
local key = P .. 'e:' .. id
local ok, after = holds(key, 3)
if not ok then return false end
local errorStatus = tonumber(ARGV[after])
if errorStatus > 0 then
  local stored = redis.call('HGET', key, 'response')
  if stored and cjson.decode(stored).status >= errorStatus then return false end
end
unindex(P, id)
setFields(key, after + 1)
local entry = redis.call('HGETALL', key)
index(P, id, key)
return entry
`;

/** ARGV: prefix, id, hasOwner, owner, n, states… → 1 if removed, else 0. */
export const REMOVE_SCRIPT = `${HELPERS}
local P, id = ARGV[1], ARGV[2]
local key = P .. 'e:' .. id
local ok = holds(key, 3)
if not ok then return 0 end
redis.call('DEL', key)
unindex(P, id)
redis.call('HDEL', P .. 'refs:identifier', id)
return 1
`;

/** ARGV: prefix, now, batch → `{entries deleted, ids examined}`; expiresAt < now. */
export const PURGE_SCRIPT = `${HELPERS}
local P = ARGV[1]
local ids = redis.call('ZRANGEBYSCORE', P .. 'expires', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local purged = 0
for _, id in ipairs(ids) do
  purged = purged + redis.call('DEL', P .. 'e:' .. id)
  unindex(P, id)
  redis.call('HDEL', P .. 'refs:identifier', id)
end
return {purged, #ids}
`;

/**
 * ARGV: prefix, key, fingerprint, entry, createdAt, expiresAt, replaced entry ('' for none),
 * replaced version → `{1|0, the binding's hash after the call}`. Stores the binding (version 1)
 * when the key is free; takes the key over (version + 1) when it is still bound to the replaced
 * entry at the replaced version and that entry is absent, rejected, or the one bound again. Redis
 * deletes a binding itself at `expiresAt`, unless its entry is kept then (see `follow`).
 */
export const BIND_IDENTIFIER_SCRIPT = `${HELPERS}
local P = ARGV[1]
local k = P .. 'i:' .. ARGV[2]
local current = redis.call('HMGET', k, 'entry', 'version')
local version = 1
if current[1] then
  local replaced = ARGV[7]
  if replaced == '' or current[1] ~= replaced or (tonumber(current[2]) or 1) ~= tonumber(ARGV[8]) then
    return {0, redis.call('HGETALL', k)}
  end
  local state = redis.call('HGET', P .. 'e:' .. replaced, 'state')
  if replaced ~= ARGV[4] and state and state ~= 'rejected' then
    return {0, redis.call('HGETALL', k)}
  end
  version = (tonumber(current[2]) or 1) + 1
end
redis.call('DEL', k)
redis.call('HSET', k, 'key', ARGV[2], 'fingerprint', ARGV[3], 'entry', ARGV[4], 'version', version,
  'createdAt', ARGV[5], 'expiresAt', ARGV[6])
redis.call('HSET', P .. 'refs:identifier', ARGV[4], ARGV[2])
local e = redis.call('HMGET', P .. 'e:' .. ARGV[4], 'state', 'response')
follow(k, ARGV[4], kept(e[1], e[2]))
return {1, redis.call('HGETALL', k)}
`;
