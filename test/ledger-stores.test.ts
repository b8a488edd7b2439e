import { createMemoryLedgerStore } from '@tollbooth/core';
import { describeLedgerStore } from './support/ledger-store-suite';

describeLedgerStore('memory', () => createMemoryLedgerStore(), { durable: false, shared: false });
