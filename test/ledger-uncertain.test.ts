// A settlement whose outcome is unknown (the facilitator's receipt wait times out: automine off)
// answers 502 retry_exact_payment_payload and leaves an `uncertain` ledger entry. Retrying the exact
// payload then reconciles through the scheme: the transfer landed → 200 with the stored response;
// the transfer was dropped and the authorization expired → 402 payment_expired. The payer is
// charged at most once in every case. Real devnet, token, facilitator and SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, type LedgerEntry, type LedgerStore } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
import type { Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerApp, LEDGER_PRICE, listenLedgerApp } from './support/ledger-app';
import { errorCodeOf, getRaw, ledgerAppConfig, paymentHeader, transfersFrom } from './support/ledger-harness';

let devnet: Devnet;
let store: LedgerStore;
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-ledger-uncertain-'));
const servers: Array<{ close(): Promise<void> }> = [];
/** The gate's clock runs this many ms ahead of the wall clock. */
let clockOffsetMs = 0;

beforeAll(async () => {
  devnet = await startDevnet({ payers: 5 });
  store = createSqliteLedgerStore({ filename: join(dir, 'ledger.db') });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await store?.close();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** An instance on the shared SQLite ledger; `slow` makes the facilitator give up on receipts fast. */
async function instance(instanceId: string, slow: boolean) {
  const { app } = createLedgerApp(
    ledgerAppConfig(devnet, { instanceId, ...(slow ? { receiptTimeoutMs: 400 } : {}) }),
    store,
    { now: () => Date.now() + clockOffsetMs },
  );
  const listening = await listenLedgerApp(app);
  servers.push(listening);
  return listening.url;
}

/** Pays with automine off: the facilitator broadcasts, waits in vain and answers settlement_pending. */
async function payWhileNothingMines(url: string, header: string) {
  await devnet.setAutomine(false);
  try {
    return await getRaw(url, { 'payment-signature': header });
  } finally {
    // Back on only in the test: each decides whether the pending transaction may land.
  }
}

async function entryOf(payer: string): Promise<LedgerEntry> {
  const [entry] = await store.query({ payer });
  if (!entry) throw new Error(`no ledger entry for ${payer}`);
  return entry;
}

describe('settlement outcome unknown, then retried with the exact payload', () => {
  it('answers 502, records uncertain, and replays the stored response once the transfer lands', async () => {
    const url = await instance('late', true);
    const payer = devnet.accounts.payers[0]!;
    const header = await paymentHeader(`${url}/paid`, payer.privateKey);
    const before = await devnet.balanceOf(payer.address);

    const first = await payWhileNothingMines(`${url}/paid`, header);
    expect(first.status).toBe(502);
    expect(JSON.parse(first.body.toString())).toMatchObject({
      error: {
        code: 'settlement_uncertain',
        retryable: true,
        retry: { instruction: 'retry_exact_payment_payload' },
      },
    });
    const uncertain = await entryOf(payer.address);
    expect(uncertain).toMatchObject({ state: 'uncertain', error: { code: 'settlement_uncertain' } });
    expect(uncertain.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(uncertain.response?.status).toBe(200);

    // Still pending: the retry cannot know yet and says so again, charging nothing more.
    const early = await getRaw(`${url}/paid`, { 'payment-signature': header });
    expect(early.status).toBe(502);
    expect(errorCodeOf(early.body)).toBe('settlement_uncertain');

    await devnet.mine();
    await devnet.setAutomine(true);
    const retry = await getRaw(`${url}/paid`, { 'payment-signature': header });
    expect(retry.status).toBe(200);
    expect(Buffer.compare(retry.body, Buffer.from(uncertain.response!.body))).toBe(0);
    expect(decodeHeaderJson(retry.headers['payment-response']!)).toMatchObject({
      success: true,
      transaction: uncertain.transaction,
      payer: payer.address,
    });
    const settled = await entryOf(payer.address);
    expect(settled).toMatchObject({ state: 'settled', transaction: uncertain.transaction });
    // Replayed byte for byte from now on.
    const again = await getRaw(`${url}/paid`, { 'payment-signature': header });
    expect(again.status).toBe(200);
    expect(Buffer.compare(again.body, retry.body)).toBe(0);
    expect(again.headers['payment-response']).toBe(retry.headers['payment-response']);

    expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
  });

  it('replays the stored response when the transfer landed and the payload is retried after validBefore', async () => {
    const url = await instance('late-retry', true);
    const payer = devnet.accounts.payers[3]!;
    const header = await paymentHeader(`${url}/paid`, payer.privateKey);
    const before = await devnet.balanceOf(payer.address);

    const first = await payWhileNothingMines(`${url}/paid`, header);
    expect(first.status).toBe(502);
    const uncertain = await entryOf(payer.address);
    await devnet.mine();
    await devnet.setAutomine(true);
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);

    // The client comes back only after its authorization expired: it paid, so it gets what it paid for.
    clockOffsetMs = (uncertain.validBefore + 1) * 1000 - Date.now();
    let retry: Awaited<ReturnType<typeof getRaw>>;
    try {
      retry = await getRaw(`${url}/paid`, { 'payment-signature': header });
    } finally {
      clockOffsetMs = 0;
    }
    expect(retry.status).toBe(200);
    expect(Buffer.compare(retry.body, Buffer.from(uncertain.response!.body))).toBe(0);
    expect(decodeHeaderJson(retry.headers['payment-response']!)).toMatchObject({
      success: true,
      transaction: uncertain.transaction,
    });
    expect(await entryOf(payer.address)).toMatchObject({
      state: 'settled',
      transaction: uncertain.transaction,
    });
    expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
  });

  it("never calls a payment expired on the gate's clock alone: with the chain still before validBefore, the retry settles it and is served, charged once", async () => {
    const url = await instance('dropped-wall', true);
    const payer = devnet.accounts.payers[1]!;
    const header = await paymentHeader(`${url}/paid`, payer.privateKey);
    const before = await devnet.balanceOf(payer.address);

    const first = await payWhileNothingMines(`${url}/paid`, header);
    expect(first.status).toBe(502);
    const uncertain = await entryOf(payer.address);
    expect(uncertain.state).toBe('uncertain');
    await devnet.testClient.dropTransaction({ hash: uncertain.transaction as Hash });
    await devnet.setAutomine(true);
    await devnet.mine();
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(0);

    // The gate's clock is past validBefore; the chain's is not, so the authorization can still be
    // used: the retries settle it again (the facilitator sends its dropped transaction again)
    // instead of refusing it as expired. Only the test's timeout bounds the retries.
    clockOffsetMs = (uncertain.validBefore + 1) * 1000 - Date.now();
    let retry: Awaited<ReturnType<typeof getRaw>>;
    try {
      retry = await getRaw(`${url}/paid`, { 'payment-signature': header });
      while (retry.status === 502) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        retry = await getRaw(`${url}/paid`, { 'payment-signature': header });
      }
    } finally {
      clockOffsetMs = 0;
    }
    expect(retry.status, errorCodeOf(retry.body)).toBe(200);
    expect(Buffer.compare(retry.body, Buffer.from(uncertain.response!.body))).toBe(0);
    const transfers = await transfersFrom(devnet, payer.address);
    expect(transfers).toHaveLength(1);
    expect(await entryOf(payer.address)).toMatchObject({ state: 'settled' });
    expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
  });

  // Last in the file: it moves chain time ahead of the wall clock.
  it('answers 402 payment_expired and records rejected when the transfer never landed and the chain passed validBefore', async () => {
    const url = await instance('dropped-chain', true);
    const payer = devnet.accounts.payers[4]!;
    const header = await paymentHeader(`${url}/paid`, payer.privateKey);
    const before = await devnet.balanceOf(payer.address);

    const first = await payWhileNothingMines(`${url}/paid`, header);
    expect(first.status).toBe(502);
    const uncertain = await entryOf(payer.address);
    await devnet.testClient.dropTransaction({ hash: uncertain.transaction as Hash });
    await devnet.setAutomine(true);
    // The token now lives past validBefore, five blocks deep (the scheme's expiry grace); the wall
    // clock (gate, facilitator) does not.
    const latest = await devnet.latestTimestamp();
    await devnet.setNextBlockTimestamp(
      BigInt(uncertain.validBefore) + 1n > latest ? uncertain.validBefore + 1 : latest + 1n,
    );
    await devnet.mine(6);

    // The chain, not the clock, says the authorization expired unused: the entry is rejected
    // (by the retry, or by the background reconciler first) and nothing is settled again. The
    // payer retries every 250 ms, as a client would, until the answer is no longer 502; only the
    // test's timeout bounds it, so a loaded machine's slow block is not the verdict.
    let retry = await getRaw(`${url}/paid`, { 'payment-signature': header });
    while (retry.status === 502) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      retry = await getRaw(`${url}/paid`, { 'payment-signature': header });
    }
    expect(retry.status).toBe(402);
    expect(errorCodeOf(retry.body)).toBe('payment_expired');
    const rejected = await entryOf(payer.address);
    expect(rejected).toMatchObject({ state: 'rejected', error: { code: 'payment_expired' } });
    // The same payload once more: the stored verdict, nothing new on chain.
    const again = await getRaw(`${url}/paid`, { 'payment-signature': header });
    expect(again.status).toBe(402);
    expect(errorCodeOf(again.body)).toBe('payment_expired');

    expect(await devnet.balanceOf(payer.address)).toBe(before);
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(0);
  });
});
