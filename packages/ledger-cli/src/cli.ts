#!/usr/bin/env node
// tollbooth-ledger: inspect a Tollbooth settlement ledger (SQLite, Redis or Postgres). Read-only.
import { runLedgerCli } from './run-ledger-cli';

const code = await runLedgerCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exitCode = code;
