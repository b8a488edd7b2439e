// The payment-identifier extension on every ledger store, against the devnet, paid by the official
// client with its own extension helpers (@x402/extensions 2.27.0): the same identifier on the same
// request is answered from one payment — byte for byte, on either of two instances, even though the
// official client signs a new authorization for every call — another request under it is a 409,
// and a crash between settlement and response loses nothing. Real anvil, real token, real Redis
// and Postgres, real HTTP servers whose connection drops once the payment is settled.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryLedgerStore, decodeHeaderJson, type LedgerStore } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { openLedgerStore } from '@tollbooth/ledger-cli';
import { ExactEvmScheme as OfficialExactEvmClient } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLedgerApp, LEDGER_PRICE, listenLedgerApp } from './support/ledger-app';
import {
  deleteRedisPrefix,
  describeWithService,
  dropPostgresSchema,
  errorCodeOf,
  ledgerAppConfig,
  newPostgresSchema,
  newRedisPrefix,
  postgresLedgerUrl,
  postgresProblem,
  redisLedgerUrl,
  redisProblem,
  transfersFrom,
} from './support/ledger-harness';

let devnet: Devnet;
const closers: Array<() => Promise<void>> = [];
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-payment-id-'));
const redisPrefix = newRedisPrefix();
const pgSchema = newPostgresSchema();
const [redisIssue, pgIssue] = await Promise.all([redisProblem(), postgresProblem()]);

beforeAll(async () => {
  devnet = await startDevnet({ payers: 12 });
});
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (redisIssue === undefined) await deleteRedisPrefix(redisPrefix);
  if (pgIssue === undefined) await dropPostgresSchema(pgSchema);
});

/** The official client, adding `id` to every payment as its extension helper does. */
function officialPay(payerKey: Hex, id: string) {
  const client = new x402Client().register(
    'eip155:*',
    new OfficialExactEvmClient(privateKeyToAccount(payerKey)),
  );
  client.onBeforePaymentCreation(async ({ paymentRequired }) => {
    paymentRequired.extensions ??= {};
    appendPaymentIdentifierToExtensions(paymentRequired.extensions, id);
  });
  return wrapFetchWithPayment(fetch, client);
}

async function read(response: Response) {
  return {
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
  };
}

function runs(log: string): number {
  return readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
}

interface StoreCase {
  name: string;
  problem: string | undefined;
  /** A store on the shared ledger; each call a new connection (memory: the one shared store). */
  open: () => Promise<LedgerStore>;
  firstPayer: number;
}

const memory = createMemoryLedgerStore({ purgeIntervalMs: 0 });
const sqliteUrl = `sqlite:${join(dir, 'ledger.db')}`;
const CASES: StoreCase[] = [
  { name: 'memory', problem: undefined, open: async () => memory, firstPayer: 0 },
  {
    name: 'SQLite',
    problem: undefined,
    open: () => openLedgerStore(sqliteUrl, { mustExist: false }),
    firstPayer: 3,
  },
  {
    name: 'Redis',
    problem: redisIssue,
    open: () => openLedgerStore(redisLedgerUrl(redisPrefix)),
    firstPayer: 6,
  },
  {
    name: 'Postgres',
    problem: pgIssue,
    open: () => openLedgerStore(postgresLedgerUrl(pgSchema), { mustExist: false }),
    firstPayer: 9,
  },
];

/** Two in-process instances on the store, each with its own connection to it. */
async function twoInstances(c: StoreCase, log: string, label: string) {
  const instances = [];
  for (const name of ['a', 'b']) {
    const store = await c.open();
    const { app, gate } = createLedgerApp(
      ledgerAppConfig(devnet, { instanceId: `${label}-${name}`, handlerLog: log }),
      store,
    );
    const listening = await listenLedgerApp(app);
    closers.push(async () => {
      await listening.close();
      await gate.close();
      if (store !== memory) await store.close();
    });
    instances.push(listening.url);
  }
  return instances as [string, string];
}

for (const c of CASES) {
  describeWithService(`payment-identifier on the ${c.name} store`, c.problem, () => {
    const label = c.name.toLowerCase();

    it('answers the same identifier on the same request from one payment, on either instance, and another request with 409', async () => {
      const log = join(dir, `${label}-same.log`);
      writeFileSync(log, '');
      const [a, b] = await twoInstances(c, log, label);
      const payer = devnet.accounts.payers[c.firstPayer]!;
      const before = await devnet.balanceOf(payer.address);
      const id = generatePaymentId();

      const first = await read(await officialPay(payer.privateKey, id)(`${a}/paid-id?x=1&y=2`));
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body.toString())).toMatchObject({ paid: true, instance: `${label}-a` });
      const receipt = decodeHeaderJson(first.headers.get('payment-response')!) as { transaction: string };
      const [transfer] = await transfersFrom(devnet, payer.address);
      expect(receipt.transaction).toBe(transfer!.transactionHash);

      // A new signature each time (the official client signs per call), same identifier, same request.
      const again = await read(await officialPay(payer.privateKey, id)(`${a}/paid-id?y=2&x=1`));
      const elsewhere = await read(await officialPay(payer.privateKey, id)(`${b}/paid-id?x=1&y=2`));
      for (const answer of [again, elsewhere]) {
        expect(answer.status).toBe(200);
        expect(Buffer.compare(answer.body, first.body)).toBe(0);
        expect(answer.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
      }

      const conflict = await read(await officialPay(payer.privateKey, id)(`${b}/paid-id?x=2&y=2`));
      expect(conflict.status).toBe(409);
      expect(errorCodeOf(conflict.body)).toBe('payment_identifier_conflict');

      expect(runs(log)).toBe(1);
      expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
      expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
    });

    it('binds the identifier to the body, which the handler still parses after the gate read it', async () => {
      const log = join(dir, `${label}-body.log`);
      writeFileSync(log, '');
      const [a, b] = await twoInstances(c, log, `${label}-body`);
      const payer = devnet.accounts.payers[c.firstPayer + 1]!;
      const id = generatePaymentId('order_');
      const order = (n: number) => ({
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ n, item: 'fee-report' }),
      });

      const first = await read(await officialPay(payer.privateKey, id)(`${a}/order-id`, order(1)));
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body.toString())).toMatchObject({ ordered: { n: 1, item: 'fee-report' } });
      const again = await read(await officialPay(payer.privateKey, id)(`${b}/order-id`, order(1)));
      expect(again.status).toBe(200);
      expect(Buffer.compare(again.body, first.body)).toBe(0);
      const other = await read(await officialPay(payer.privateKey, id)(`${b}/order-id`, order(2)));
      expect(other.status).toBe(409);
      expect(errorCodeOf(other.body)).toBe('payment_identifier_conflict');

      expect(runs(log)).toBe(1);
      expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
    });

    it('loses nothing to a crash between settlement and response: a retry under the identifier gets the stored bytes', async () => {
      const log = join(dir, `${label}-crash.log`);
      writeFileSync(log, '');
      const payer = devnet.accounts.payers[c.firstPayer + 2]!;
      const before = await devnet.balanceOf(payer.address);
      const id = generatePaymentId();
      // The instance settles, stores the response, and its connection is dropped before a byte is
      // sent; a new instance on a new connection to the store takes the retry.
      const open = new Map<string, ServerResponse>();
      const dyingStore = await c.open();
      const { app, gate } = createLedgerApp(
        ledgerAppConfig(devnet, { instanceId: `${label}-dying`, handlerLog: log }),
        dyingStore,
        {
          beforeGate: (req, res, next) => {
            const requestId = req.headers['x-request-id'];
            if (typeof requestId === 'string') open.set(requestId, res);
            next();
          },
          hooks: { onSettled: (payment) => void open.get(payment.requestId)?.socket?.destroy() },
        },
      );
      const listening = await listenLedgerApp(app);
      closers.push(async () => {
        await listening.close();
        await gate.close();
        if (dyingStore !== memory) await dyingStore.close();
      });
      await expect(
        officialPay(payer.privateKey, id)(`${listening.url}/paid-id`, {
          headers: { 'x-request-id': `crash-${label}` },
        }),
      ).rejects.toThrow();
      const retryUrl = (await twoInstances(c, log, `${label}-next`))[1];
      expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
      expect(runs(log)).toBe(1);

      const store = await c.open();
      let stored: Awaited<ReturnType<LedgerStore['get']>>;
      try {
        [stored] = await store.query({ payer: payer.address });
      } finally {
        if (store !== memory) await store.close();
      }
      expect(stored).toMatchObject({ state: 'settled' });

      const retry = await read(await officialPay(payer.privateKey, id)(`${retryUrl}/paid-id`));
      expect(retry.status).toBe(200);
      expect(Buffer.compare(retry.body, Buffer.from(stored!.response!.body))).toBe(0);
      expect(retry.headers.get('payment-response')).toBe(stored!.response!.headers['payment-response']);
      expect(JSON.parse(retry.body.toString())).toMatchObject({ paid: true, instance: `${label}-dying` });
      expect(runs(log)).toBe(1);
      expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
      expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
    });
  });
}
