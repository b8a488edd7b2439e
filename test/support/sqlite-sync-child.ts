// Child of test/ledger-synchronous-commits.test.ts, run under strace: opens a SQLite ledger file
// (made, closed and opened again first, as a restarted fee service does), then makes
// SYNC_REQUESTS paid requests between two marker writes on stderr, so the fsyncs between the
// markers are those of the paid requests.
import { writeSync } from 'node:fs';
import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
import { ledgerOver, paidRequest } from './ledger-paid-request';

const filename = process.env['SYNC_SQLITE_FILE']!;
const requests = Number(process.env['SYNC_REQUESTS'] ?? '10');
const mode = process.env['SYNC_MODE'] === 'before' ? 'before' : 'after';

await createSqliteLedgerStore({ filename, purgeIntervalMs: 0 }).close();
const store = createSqliteLedgerStore({ filename, purgeIntervalMs: 0 });
const ledger = ledgerOver(store);
await paidRequest(ledger, mode); // warm: statements prepared, the WAL in use
writeSync(2, 'tollbooth-sync-begin\n');
for (let i = 0; i < requests; i++) await paidRequest(ledger, mode);
writeSync(2, 'tollbooth-sync-end\n');
ledger.leases.stop();
await store.close();
