// @tollbooth/store-postgres: the settlement ledger in PostgreSQL (pg).
export {
  createPostgresLedgerStore,
  POSTGRES_LEDGER_STORE_DEFAULTS,
  type PostgresLedgerStore,
  type PostgresLedgerStoreOptions,
} from './postgres-store';
