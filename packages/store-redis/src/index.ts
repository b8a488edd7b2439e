// @tollbooth/store-redis: the settlement ledger in Redis (ioredis).
export {
  createRedisLedgerStore,
  REDIS_LEDGER_STORE_DEFAULTS,
  type RedisLedgerStoreOptions,
} from './redis-store';
