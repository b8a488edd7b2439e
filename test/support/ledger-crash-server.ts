// Child process of the ledger durability suites: one instance of the paid app (ledger-app.ts) on a
// ledger store named by a URL (SQLite file, Redis, Postgres). Config comes as JSON in
// LEDGER_SERVER_CONFIG (plus LEDGER_URL); once listening it prints one line
// `LEDGER_SERVER_READY {"url": …}`. With `crashOnSettled` it SIGKILLs itself from the gate's
// onSettled hook: the settled response is in the ledger, the HTTP response never leaves.
//
// Run: node --conditions=tollbooth-source --import tsx test/support/ledger-crash-server.ts
import { openLedgerStore } from '@tollbooth/ledger-cli';
import { createLedgerApp, type LedgerAppConfig, listenLedgerApp } from './ledger-app';

const config = JSON.parse(process.env['LEDGER_SERVER_CONFIG'] ?? '') as LedgerAppConfig;
const ledgerUrl = process.env['LEDGER_URL'];
if (!ledgerUrl) throw new Error('LEDGER_URL is required');

const store = await openLedgerStore(ledgerUrl, { mustExist: false });
const { app } = createLedgerApp(config, store, {
  hooks: config.crashOnSettled
    ? {
        onSettled: () => {
          process.kill(process.pid, 'SIGKILL');
        },
      }
    : {},
});
const listening = await listenLedgerApp(app);
process.stdout.write(`LEDGER_SERVER_READY ${JSON.stringify({ url: listening.url, pid: process.pid })}\n`);

const shutdown = () => {
  void listening
    .close()
    .then(() => store.close())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
