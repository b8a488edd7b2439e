export { ACCESS_QUERY_DEFAULT_LIMIT, accessQueryLimit, newerGrantFirst } from './memory-access';
export { assertReservationAmount } from './memory-reservations';
export {
  createMemoryLedgerStore,
  LEDGER_QUERY_DEFAULT_LIMIT,
  MEMORY_LEDGER_STORE_DEFAULTS,
  type MemoryLedgerStoreOptions,
} from './memory-store';
