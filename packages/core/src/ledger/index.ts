// @tollbooth/core/ledger: what a ledger store package is built from (the store-* packages use it).
// The `LedgerStore` interface, its types and the in-memory store are on `@tollbooth/core`; here
// are the helpers that implement it the same way everywhere: the ledger's invariant, the row
// mapping of entries and access grants, the query limits, and the order access grants are used in.
export {
  ACCESS_COLUMNS,
  type AccessRow,
  fromAccessRow,
  toAccessValues,
} from './access-row';
export { accessHolds, grantUseOrder } from './access-types';
export { assertLedgerInvariant, settlesWithStoredResponse } from './invariant';
export {
  fromLedgerRow,
  LEDGER_JSON_COLUMNS,
  type LedgerColumn,
  type LedgerColumnValue,
  type LedgerRow,
  toLedgerColumns,
} from './ledger-row';
export {
  ACCESS_QUERY_DEFAULT_LIMIT,
  accessQueryLimit,
  assertReservationAmount,
  LEDGER_QUERY_DEFAULT_LIMIT,
  newerGrantFirst,
} from './memory/index';
export { isReservationAmount, reservationKey } from './reservation-types';
