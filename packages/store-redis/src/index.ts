// @tollbooth/store-redis: the settlement ledger in Redis (ioredis).
export {
  createRedisLedgerStore,
  REDIS_LEDGER_STORE_DEFAULTS,
  RedisLedgerStoreError,
  type RedisLedgerStoreOptions,
} from './redis-store';
