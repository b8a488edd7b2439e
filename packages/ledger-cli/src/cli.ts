#!/usr/bin/env node
// tollbooth-ledger: inspect a Tollbooth settlement ledger (SQLite, Redis or Postgres). Read-only.
import { runLedgerCli } from './run-ledger-cli';

// Through `npm run ledger -w @tollbooth/ledger-cli`, relative paths mean where npm was run.
if (process.env['npm_lifecycle_event'] === 'ledger' && process.env['INIT_CWD'])
  process.chdir(process.env['INIT_CWD']);

// No top-level await: the package is also built as CommonJS.
void runLedgerCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((code) => {
  process.exitCode = code;
});
