// The ledger writes of one paid request, made by the gate's own lifecycle verbs (no facilitator,
// no handler): for the synchronous-commit count of test/ledger-synchronous-commits.test.ts.
import { randomBytes } from 'node:crypto';
import type { LedgerStore } from '@tollbooth/core';
import {
  claim,
  markVerified,
  recordAnswer,
  recordSettled,
  startSettling,
  startSettlingUnverified,
} from '../../packages/core/src/ledger/lifecycle';
import { SettlementLedger } from '../../packages/core/src/ledger/settlement-ledger';

const RESPONSE = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{"paid":true}'),
};
const RECEIPT = { success: true, transaction: `0x${'ab'.repeat(32)}`, network: 'eip155:31337', payer: '0x1' };

/** A ledger over `store` as a gate builds it (long leases: no renewal writes during a test). */
export function ledgerOver(store: LedgerStore): SettlementLedger {
  return new SettlementLedger({
    store,
    instanceId: `sync-${randomBytes(3).toString('hex')}`,
    leaseMs: 600_000,
    retentionMs: 3_600_000,
    now: Date.now,
  });
}

/**
 * One paid request's ledger writes: `after` (the default, settle after the handler): claim →
 * verified → settling with the answer → settled; `before` (settle before the handler): claim →
 * settling → settled → the handler's answer.
 */
export async function paidRequest(ledger: SettlementLedger, mode: 'after' | 'before'): Promise<void> {
  const id = `eip155:31337:0xtoken:0xpayer:0x${randomBytes(16).toString('hex')}`;
  const entry = ledger.newEntry({
    id,
    owner: ledger.owner(randomBytes(4).toString('hex')),
    resource: 'http://127.0.0.1/paid',
    route: 'GET /paid',
    network: 'eip155:31337',
    payer: '0x1',
    payload: { x402Version: 2 },
    requirements: { maxTimeoutSeconds: 60 },
    validBefore: Math.floor(Date.now() / 1000) + 3600,
  });
  const claimed = await claim(ledger, entry);
  if (!claimed.acquired) throw new Error('claim not acquired');
  const receipt = RECEIPT as Parameters<typeof recordSettled>[2]['receipt'];
  if (mode === 'after') {
    if (!(await markVerified(ledger, entry))) throw new Error('verified CAS failed');
    if (!(await startSettling(ledger, entry, RESPONSE))) throw new Error('settling CAS failed');
    if (!(await recordSettled(ledger, entry, { receipt, response: RESPONSE })))
      throw new Error('settled CAS failed');
  } else {
    if (!(await startSettlingUnverified(ledger, entry))) throw new Error('settling CAS failed');
    if (!(await recordSettled(ledger, entry, { receipt }))) throw new Error('settled CAS failed');
    if (!(await recordAnswer(ledger, entry, RESPONSE))) throw new Error('answer CAS failed');
  }
  await ledger.leases.letGo(entry);
}
