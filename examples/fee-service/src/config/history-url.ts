/**
 * The history URL that goes with a ledger URL: a SQLite ledger `x.sqlite` gets `x.observatory.sqlite`
 * beside it; a PostgreSQL ledger shares its database; a Redis ledger has no SQL beside it, so the
 * history stays in a local SQLite file.
 * @example historyUrlBesideLedger('sqlite:.tollbooth/ledger.sqlite') // 'sqlite:.tollbooth/ledger.observatory.sqlite'
 */
export function historyUrlBesideLedger(ledgerUrl: string): string {
  if (ledgerUrl.startsWith('sqlite:')) {
    const file = ledgerUrl.slice('sqlite:'.length);
    if (file === ':memory:') return 'sqlite::memory:';
    return `sqlite:${file.replace(/(\.sqlite3?|\.db)?$/, '')}.observatory.sqlite`;
  }
  if (/^postgres(ql)?:\/\//.test(ledgerUrl)) return ledgerUrl;
  return 'sqlite:.tollbooth/observatory.sqlite';
}
