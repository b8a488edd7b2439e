// @tollbooth/ledger-cli: read-only inspection of a Tollbooth settlement ledger, and the
// `tollbooth-ledger` command.
export {
  entryToJson,
  formatEntryDetail,
  formatEntryTable,
  formatStats,
  formatTable,
  type LedgerEntryJson,
} from './format-entries';
export {
  createLedgerInspector,
  LEDGER_INSPECTOR_DEFAULTS,
  LEDGER_STATES,
  type LedgerInspector,
  type LedgerListFilter,
  type LedgerStats,
} from './ledger-inspector';
export {
  LEDGER_URL_FORMS,
  type LedgerLocation,
  OPEN_LEDGER_STORE_DEFAULTS,
  type OpenLedgerStoreOptions,
  openLedgerStore,
  parseLedgerUrl,
  redactLedgerUrl,
} from './ledger-url';
export {
  LEDGER_CLI_EXIT,
  LEDGER_CLI_USAGE,
  LEDGER_URL_ENV,
  type LedgerCliIo,
  runLedgerCli,
  SERVICE_LEDGER_URL_ENV,
} from './run-ledger-cli';
