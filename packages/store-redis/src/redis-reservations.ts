// The Redis ledger store's balance reservations (docs/ledger.md#one-balance-one-side-effect).
//
// Keys, under the store's prefix `P`:
// - `P r:<key>`   hash: entry → `<expiresAt>:<amount>` of each reservation on one balance;
//                 PEXPIREAT the latest expiresAt (Redis ends the key itself), expired fields are
//                 dropped by the next reservation on the key
import type { BalanceReservation, PaymentIdentity, ReservationStore } from '@tollbooth/core';
import { assertReservationAmount } from '@tollbooth/core/ledger';

/**
 * Records a reservation and returns the amount held on its key (a decimal string): the unexpired
 * reservations of the key but its own entry's, plus its own. Decimal strings are added digit by
 * digit (Lua numbers are doubles: exact only below 2^53).
 */
export const RESERVE_BALANCE_SCRIPT = `
local key, entry, amount, expires, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local function add(a, b)
  local digits, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry
    if i > 0 then d = d + tonumber(string.sub(a, i, i)); i = i - 1 end
    if j > 0 then d = d + tonumber(string.sub(b, j, j)); j = j - 1 end
    digits[#digits + 1] = tostring(d % 10)
    carry = math.floor(d / 10)
  end
  return string.reverse(table.concat(digits))
end
local held, latest = amount, expires
local fields = redis.call('HGETALL', key)
for i = 1, #fields, 2 do
  local other, value = fields[i], fields[i + 1]
  local at = string.find(value, ':', 1, true)
  local until_ = tonumber(string.sub(value, 1, at - 1))
  if until_ <= now then
    redis.call('HDEL', key, other)
  elseif other ~= entry then
    held = add(held, string.sub(value, at + 1))
    if until_ > latest then latest = until_ end
  end
end
redis.call('HSET', key, entry, ARGV[4] .. ':' .. amount)
redis.call('PEXPIREAT', key, latest)
return held
`;

/** The reservation methods of the Redis store. */
export function createRedisReservations(context: {
  prefix: string;
  scriptPrefix: string;
  redis: { hdel(key: string, field: string): Promise<number> };
  run: <T>(script: string, args: string[]) => Promise<T>;
  assertOpen: () => void;
}): ReservationStore {
  const { prefix, scriptPrefix, redis, run, assertOpen } = context;
  return {
    async reserveBalance(reservation: BalanceReservation, now: number) {
      assertOpen();
      assertReservationAmount(reservation);
      const held = await run<string>(RESERVE_BALANCE_SCRIPT, [
        `${scriptPrefix}r:${reservation.key}`,
        reservation.entry,
        reservation.amount,
        String(reservation.expiresAt),
        String(now),
      ]);
      return { held: BigInt(held).toString() };
    },
    async releaseReservation(key: string, entry: PaymentIdentity) {
      assertOpen();
      return (await redis.hdel(`${prefix}r:${key}`, entry)) > 0;
    },
  };
}
