// @tollbooth/store-sqlite: the settlement ledger in a SQLite file (better-sqlite3).
export {
  createSqliteLedgerStore,
  SQLITE_LEDGER_STORE_DEFAULTS,
  type SqliteLedgerStoreOptions,
} from './sqlite-store';
