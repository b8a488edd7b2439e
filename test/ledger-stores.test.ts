import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLedgerStore } from '@tollbooth/core';
import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
import { describeLedgerStore } from './support/ledger-store-suite';

describeLedgerStore('memory', () => createMemoryLedgerStore(), { durable: false, shared: false });

// One database file per run; each namespace is a table of its own, opened by a new connection each time.
const sqliteDir = mkdtempSync(join(tmpdir(), 'tollbooth-ledger-'));
describeLedgerStore(
  'SQLite',
  (namespace) =>
    createSqliteLedgerStore({ filename: join(sqliteDir, 'ledger.db'), tableName: `ledger_${namespace}` }),
  { durable: true, shared: true, cleanup: async () => rmSync(sqliteDir, { recursive: true, force: true }) },
);
