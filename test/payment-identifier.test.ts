// The payment-identifier extension on every ledger store, against the devnet, paid by the official
// client with its own extension helpers (@x402/extensions 2.27.0): the same identifier on the same
// request is answered from one payment — byte for byte, on either of two instances, even though the
// official client signs a new authorization for every call — another request under it is a 409,
// and a crash between settlement and response loses nothing. Real anvil, real token, real Redis
// and Postgres, real HTTP servers whose connection drops once the payment is settled, and on the
// stores shared between processes a real server process SIGKILLed between settlement and response.
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
  ChildServers,
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
const children = new ChildServers();
const closers: Array<() => Promise<void>> = [];
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-payment-id-'));
const redisPrefix = newRedisPrefix();
const pgSchema = newPostgresSchema();
const [redisIssue, pgIssue] = await Promise.all([redisProblem(), postgresProblem()]);

beforeAll(async () => {
  devnet = await startDevnet({ payers: 16 });
});
afterAll(async () => {
  await children.killAll();
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (redisIssue === undefined) await deleteRedisPrefix(redisPrefix);
  if (pgIssue === undefined) await dropPostgresSchema(pgSchema);
});

/** The official client, adding `id` to every payment as its extension helper does. */
function officialPay(payerKey: Hex, id: string, baseFetch: typeof fetch = fetch) {
  const client = new x402Client().register(
    'eip155:*',
    new OfficialExactEvmClient(privateKeyToAccount(payerKey)),
  );
  client.onBeforePaymentCreation(async ({ paymentRequired }) => {
    paymentRequired.extensions ??= {};
    appendPaymentIdentifierToExtensions(paymentRequired.extensions, id);
  });
  return wrapFetchWithPayment(baseFetch, client);
}

/** A fetch that keeps every PAYMENT-SIGNATURE it sends. */
function recordingFetch(sent: string[]): typeof fetch {
  return (input, init) => {
    const request = new Request(input, init);
    const payment = request.headers.get('payment-signature');
    if (payment) sent.push(payment);
    return fetch(request);
  };
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
  /** The store's URL for a server in another process; none for memory, which dies with its process. */
  url?: string;
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
    url: sqliteUrl,
    firstPayer: 4,
  },
  {
    name: 'Redis',
    problem: redisIssue,
    open: () => openLedgerStore(redisLedgerUrl(redisPrefix)),
    url: redisLedgerUrl(redisPrefix),
    firstPayer: 8,
  },
  {
    name: 'Postgres',
    problem: pgIssue,
    open: () => openLedgerStore(postgresLedgerUrl(pgSchema), { mustExist: false }),
    url: postgresLedgerUrl(pgSchema),
    firstPayer: 12,
  },
];

/** The payer's entry in the store, read on a connection of its own. */
async function storedEntryOf(c: StoreCase, payer: string) {
  const store = await c.open();
  try {
    const [entry] = await store.query({ payer });
    return entry;
  } finally {
    if (store !== memory) await store.close();
  }
}

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

      const stored = await storedEntryOf(c, payer.address);
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

    // A memory store dies with the process that holds it: nothing to ask after a SIGKILL.
    if (c.url === undefined) return;
    it('loses nothing to a SIGKILL of the serving process between settlement and response: a new process answers the identifier', async () => {
      const url = c.url!;
      const log = join(dir, `${label}-sigkill.log`);
      writeFileSync(log, '');
      const payer = devnet.accounts.payers[c.firstPayer + 3]!;
      const before = await devnet.balanceOf(payer.address);
      const id = generatePaymentId();
      const sent: string[] = [];
      // The first process SIGKILLs itself from onSettled: settled and stored, not a byte sent.
      const [dying, next] = await Promise.all([
        children.start(
          ledgerAppConfig(devnet, { instanceId: `${label}-killed`, handlerLog: log, crashOnSettled: true }),
          url,
        ),
        children.start(ledgerAppConfig(devnet, { instanceId: `${label}-after`, handlerLog: log }), url),
      ]);
      await expect(
        officialPay(payer.privateKey, id, recordingFetch(sent))(`${dying.url}/paid-id?q=1`),
      ).rejects.toThrow();
      expect(await dying.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
      expect(runs(log)).toBe(1);

      const stored = await storedEntryOf(c, payer.address);
      expect(stored).toMatchObject({ state: 'settled', owner: expect.stringMatching(`^${label}-killed:`) });

      // The retry: the same identifier, a payload signed anew, another process.
      const retry = await read(
        await officialPay(payer.privateKey, id, recordingFetch(sent))(`${next.url}/paid-id?q=1`),
      );
      expect(retry.status).toBe(200);
      expect(Buffer.compare(retry.body, Buffer.from(stored!.response!.body))).toBe(0);
      expect(retry.headers.get('payment-response')).toBe(stored!.response!.headers['payment-response']);
      expect(JSON.parse(retry.body.toString())).toMatchObject({ paid: true, instance: `${label}-killed` });
      expect(sent).toHaveLength(2);
      expect(sent[1]).not.toBe(sent[0]);
      const ids = sent.map(
        (header) =>
          (decodeHeaderJson(header) as { extensions: Record<string, { info: { id: string } }> }).extensions[
            'payment-identifier'
          ]!.info.id,
      );
      expect(ids).toEqual([id, id]);

      expect(runs(log)).toBe(1);
      const transfers = await transfersFrom(devnet, payer.address);
      expect(transfers).toHaveLength(1);
      const receipt = decodeHeaderJson(retry.headers.get('payment-response')!) as { transaction: string };
      expect(receipt.transaction).toBe(transfers[0]!.transactionHash);
      expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
      await children.stop(next);
    });
  });
}
