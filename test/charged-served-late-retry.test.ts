// Issue 32, part 4: a charged answer is never refused for coming back late. A paid route that
// settles after its handler; the settle answer is lost after the transfer landed (the standalone
// `tollbooth-facilitator`, a child process, behind the fault proxy in `settle-answer-dropped`); the
// payer gets 502; the gate's own reconciler finds the transfer on chain and records the entry
// settled — the stored answer was never delivered. The payer comes back with the exact payload at
// twice maxTimeoutSeconds (the gate's clock moved on; nothing else is faked): it gets the stored 200
// byte for byte, with the receipt of its one transfer. Before the fix the replay window refused it
// (402 payment_already_used): charged, never served. On SQLite and on PostgreSQL, anvil with the
// EIP-3009 token judging what was charged.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, type LedgerEntry, type LedgerStore } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { type FacilitatorFaultProxy, startFacilitatorFaultProxy } from '@tollbooth/facilitator';
import { openLedgerStore } from '@tollbooth/ledger-cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Processes, startFacilitatorProcess } from './support/fault-harness';
import { createLedgerApp, LEDGER_PRICE, listenLedgerApp } from './support/ledger-app';
import {
  describeWithService,
  dropPostgresSchema,
  errorCodeOf,
  getRaw,
  ledgerAppConfig,
  newPostgresSchema,
  paymentHeader,
  postgresLedgerUrl,
  postgresProblem,
  transfersFrom,
} from './support/ledger-harness';

/** maxTimeoutSeconds of the ledger app's `/paid` route. */
const MAX_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 120_000;

const procs = new Processes();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-late-retry-'));
const pgProblem = await postgresProblem();
const pgSchema = newPostgresSchema();
let devnet: Devnet;
let proxy: FacilitatorFaultProxy;
let payerTurn = 0;

beforeAll(async () => {
  devnet = await startDevnet({ payers: 4 });
  const facilitator = await startFacilitatorProcess(procs, devnet);
  proxy = await startFacilitatorFaultProxy({ target: facilitator.url });
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await procs.killAll();
  await proxy?.close();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (pgProblem === undefined) await dropPostgresSchema(pgSchema);
});

/** Resolves with the entry once `check` holds for it, polled every 50 ms (hang guard 30 s). */
async function entryWhen(
  store: LedgerStore,
  payer: string,
  check: (entry: LedgerEntry) => boolean,
): Promise<LedgerEntry> {
  const started = Date.now();
  for (;;) {
    const [entry] = await store.query({ payer });
    if (entry && check(entry)) return entry;
    if (Date.now() - started > 30_000) throw new Error(`entry of ${payer}: ${JSON.stringify(entry?.state)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function lateRetrySuite(ledgerUrl: () => string) {
  let store: LedgerStore;
  let url: string;
  let close: () => Promise<void>;
  /** The gate's clock runs this many ms ahead of the wall clock. */
  let clockOffsetMs = 0;
  const handlerLog = join(dir, `handler-${Math.random().toString(36).slice(2)}.log`);

  beforeAll(async () => {
    store = await openLedgerStore(ledgerUrl(), { mustExist: false });
    const { app } = createLedgerApp(
      ledgerAppConfig(devnet, { instanceId: 'late-retry', facilitatorUrl: proxy.url, handlerLog }),
      store,
      { now: () => Date.now() + clockOffsetMs },
    );
    ({ url, close } = await listenLedgerApp(app));
  }, TEST_TIMEOUT_MS);
  afterAll(async () => {
    await close?.();
    await store?.close();
  });

  it(
    'answers the exact payload retried at twice maxTimeoutSeconds with the stored 200, after a lost settle answer the reconciler resolved',
    async () => {
      const payer = devnet.accounts.payers[payerTurn++]!;
      const header = await paymentHeader(`${url}/paid`, payer.privateKey);
      const before = await devnet.balanceOf(payer.address);

      proxy.setMode('settle-answer-dropped');
      let first: Awaited<ReturnType<typeof getRaw>>;
      try {
        first = await getRaw(`${url}/paid`, { 'payment-signature': header });
      } finally {
        proxy.setMode('pass');
      }
      expect(first.status).toBe(502);
      expect(errorCodeOf(first.body)).toBe('settlement_uncertain');
      const transfers = await transfersFrom(devnet, payer.address);
      expect(transfers).toHaveLength(1);

      // Nobody retries; the gate's reconciler asks the chain and records the transfer.
      const settled = await entryWhen(store, payer.address, (entry) => entry.state === 'settled');
      expect(settled).toMatchObject({
        transaction: transfers[0]!.transactionHash,
        resolution: { by: 'reconciler', action: 'confirmed-on-chain' },
      });
      const stored = settled.response!;
      expect(stored.status).toBe(200);

      clockOffsetMs = settled.createdAt + 2 * MAX_TIMEOUT_MS - Date.now();
      let late: Awaited<ReturnType<typeof getRaw>>;
      try {
        late = await getRaw(`${url}/paid`, { 'payment-signature': header });
      } finally {
        clockOffsetMs = 0;
      }
      expect(late.status, late.body.toString()).toBe(200);
      expect(Buffer.compare(late.body, Buffer.from(stored.body))).toBe(0);
      expect(decodeHeaderJson(late.headers['payment-response']!)).toMatchObject({
        success: true,
        transaction: transfers[0]!.transactionHash,
        payer: payer.address,
      });
      expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
      expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
      expect(readFileSync(handlerLog, 'utf8').trim().split('\n')).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );
}

describe('a late retry after a lost settle answer: SQLite', () => {
  lateRetrySuite(() => `sqlite:${join(dir, 'ledger.sqlite')}`);
});
describeWithService('a late retry after a lost settle answer: PostgreSQL', pgProblem, () => {
  lateRetrySuite(() => postgresLedgerUrl(pgSchema));
});
