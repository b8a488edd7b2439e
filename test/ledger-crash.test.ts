// A server that settles a real payment and dies before sending the response loses nothing: a new
// process on the same ledger answers the retried payload with the stored response, and the chain
// shows one transfer. Also: an uncertain settlement left by a dead process is reconciled by the
// next one. Real devnet, real token, real child processes (SIGKILL), real SQLite / Postgres.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, type LedgerStore } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { openLedgerStore } from '@tollbooth/ledger-cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEDGER_PRICE } from './support/ledger-app';
import {
  ChildServers,
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

let devnet: Devnet;
const children = new ChildServers();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-ledger-crash-'));
const pgSchema = newPostgresSchema();
const pgProblem = await postgresProblem();

beforeAll(async () => {
  devnet = await startDevnet({ payers: 4 });
});
afterAll(async () => {
  await children.killAll();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (pgProblem === undefined) await dropPostgresSchema(pgSchema);
});

function handlerRuns(log: string): string[] {
  try {
    return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * Settles a payment in a child that SIGKILLs itself from onSettled, then retries the exact
 * payload against a new child on the same ledger.
 */
async function crashThenRetry(ledgerUrl: string, payerIndex: number, label: string) {
  const payer = devnet.accounts.payers[payerIndex]!;
  const log = join(dir, `${label}-handler.log`);
  writeFileSync(log, '');
  // The second process starts alongside (to save time) and stays idle until the retry: it never
  // sees the payment before the first one is dead.
  const [first, second] = await Promise.all([
    children.start(
      ledgerAppConfig(devnet, { instanceId: `${label}-a`, handlerLog: log, crashOnSettled: true }),
      ledgerUrl,
    ),
    children.start(ledgerAppConfig(devnet, { instanceId: `${label}-b`, handlerLog: log }), ledgerUrl),
  ]);
  const header = await paymentHeader(`${first.url}/paid`, payer.privateKey);
  const before = await devnet.balanceOf(payer.address);

  // The first process settles, stores the response, and dies before a byte of it is sent.
  await expect(getRaw(`${first.url}/paid`, { 'payment-signature': header })).rejects.toThrow();
  expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
  expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
  expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
  expect(handlerRuns(log)).toHaveLength(1);

  // What the dead process would have sent is in the ledger.
  const store: LedgerStore = await openLedgerStore(ledgerUrl);
  let stored: NonNullable<Awaited<ReturnType<LedgerStore['get']>>>;
  try {
    const [entry] = await store.query({ payer: payer.address });
    expect(entry).toMatchObject({
      state: 'settled',
      owner: expect.stringMatching(new RegExp(`^${label}-a:`)),
    });
    stored = entry!;
  } finally {
    await store.close();
  }
  expect(stored.response?.status).toBe(200);
  const receipt = decodeHeaderJson(stored.response!.headers['payment-response']!) as { transaction: string };
  const [transfer] = await transfersFrom(devnet, payer.address);
  expect(receipt.transaction).toBe(transfer!.transactionHash);

  // A new process on the same ledger answers the retry with those exact bytes, settling nothing.
  const retry = await getRaw(`${second.url}/paid`, { 'payment-signature': header });
  expect(retry.status).toBe(200);
  expect(Buffer.compare(retry.body, Buffer.from(stored.response!.body))).toBe(0);
  for (const [name, value] of Object.entries(stored.response!.headers))
    expect(retry.headers[name]).toBe(value);
  expect(JSON.parse(retry.body.toString())).toMatchObject({ paid: true, instance: `${label}-a` });
  // And again: still the same bytes.
  const again = await getRaw(`${second.url}/paid`, { 'payment-signature': header });
  expect(Buffer.compare(again.body, retry.body)).toBe(0);

  expect(handlerRuns(log)).toHaveLength(1);
  expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
  expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
  await children.stop(second);
}

describe('crash between settlement and response (SQLite file)', () => {
  it('answers the retried payload from a new process with the stored response, charging once', async () => {
    await crashThenRetry(`sqlite:${join(dir, 'crash.db')}`, 0, 'sqlite');
  });

  it('reconciles an uncertain settlement left by a stopped process when the payload is retried', async () => {
    const ledgerUrl = `sqlite:${join(dir, 'uncertain.db')}`;
    const payer = devnet.accounts.payers[1]!;
    const log = join(dir, 'uncertain-handler.log');
    writeFileSync(log, '');
    const first = await children.start(
      ledgerAppConfig(devnet, { instanceId: 'slow', handlerLog: log, receiptTimeoutMs: 500 }),
      ledgerUrl,
    );
    const header = await paymentHeader(`${first.url}/paid`, payer.privateKey);
    const before = await devnet.balanceOf(payer.address);

    await devnet.setAutomine(false);
    let pending: Awaited<ReturnType<typeof getRaw>>;
    try {
      pending = await getRaw(`${first.url}/paid`, { 'payment-signature': header });
    } finally {
      await children.stop(first);
      await devnet.setAutomine(true);
    }
    expect(pending.status).toBe(502);
    expect(JSON.parse(pending.body.toString())).toMatchObject({
      error: {
        code: 'settlement_uncertain',
        retryable: true,
        retry: { instruction: 'retry_exact_payment_payload' },
      },
    });
    // setAutomine(true) mines what was pending: the transfer landed while no process was up.
    const store = await openLedgerStore(ledgerUrl);
    let uncertain: Awaited<ReturnType<LedgerStore['query']>>;
    try {
      uncertain = await store.query({ state: 'uncertain' });
    } finally {
      await store.close();
    }
    expect(uncertain).toHaveLength(1);
    expect(uncertain[0]!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    if ((await transfersFrom(devnet, payer.address)).length === 0) await devnet.mine();
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);

    const second = await children.start(
      ledgerAppConfig(devnet, { instanceId: 'next', handlerLog: log }),
      ledgerUrl,
    );
    const retry = await getRaw(`${second.url}/paid`, { 'payment-signature': header });
    expect(retry.status).toBe(200);
    expect(JSON.parse(retry.body.toString())).toMatchObject({ paid: true, instance: 'slow' });
    const receipt = decodeHeaderJson(retry.headers['payment-response']!) as {
      success: boolean;
      transaction: string;
    };
    expect(receipt).toMatchObject({ success: true, transaction: uncertain[0]!.transaction });
    expect(handlerRuns(log)).toHaveLength(1);
    expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);

    const after = await openLedgerStore(ledgerUrl);
    try {
      expect(await after.query({ state: 'uncertain' })).toHaveLength(0);
      const [entry] = await after.query({ payer: payer.address });
      expect(entry).toMatchObject({ state: 'settled', transaction: uncertain[0]!.transaction });
      expect(Buffer.compare(Buffer.from(entry!.response!.body), retry.body)).toBe(0);
    } finally {
      await after.close();
    }
    expect(errorCodeOf(pending.body)).toBe('settlement_uncertain');
    await children.stop(second);
  });
});

describeWithService('crash between settlement and response (Postgres)', pgProblem, () => {
  it('answers the retried payload from a new process with the stored response, charging once', async () => {
    await crashThenRetry(postgresLedgerUrl(pgSchema), 2, 'postgres');
  });
});
