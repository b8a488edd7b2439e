// Two instances (two child processes, two gates with their own instance ids) share one ledger and
// receive the same real payment fifty times at once: the handler runs once, the chain shows one
// transfer, and every answer is the stored 200 (byte for byte) or a retryable 409.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { openLedgerStore } from '@tollbooth/ledger-cli';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LEDGER_PRICE } from './support/ledger-app';
import {
  ChildServers,
  deleteRedisPrefix,
  describeWithService,
  dropPostgresSchema,
  getRaw,
  ledgerAppConfig,
  newPostgresSchema,
  newRedisPrefix,
  paymentHeader,
  postgresLedgerUrl,
  postgresProblem,
  redisLedgerUrl,
  redisProblem,
  transfersFrom,
} from './support/ledger-harness';

const REQUESTS = 50;

let devnet: Devnet;
const children = new ChildServers();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-ledger-multi-'));
const redisPrefix = newRedisPrefix();
const pgSchema = newPostgresSchema();
const [rProblem, pgProblem] = await Promise.all([redisProblem(), postgresProblem()]);

beforeAll(async () => {
  devnet = await startDevnet({ payers: 3 });
});
afterAll(async () => {
  await children.killAll();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (rProblem === undefined) await deleteRedisPrefix(redisPrefix);
  if (pgProblem === undefined) await dropPostgresSchema(pgSchema);
});

async function samePayloadFiftyTimes(
  ledgerUrl: string,
  payerIndex: number,
  label: string,
  inFlightWaitMs = 5_000,
) {
  const payer = devnet.accounts.payers[payerIndex]!;
  const log = join(dir, `${label}.log`);
  writeFileSync(log, '');
  const config = (instanceId: string) =>
    ledgerAppConfig(devnet, { instanceId, handlerLog: log, inFlightWaitMs });
  const [a, b] = await Promise.all([
    children.start(config(`${label}-a`), ledgerUrl),
    children.start(config(`${label}-b`), ledgerUrl),
  ]);
  const header = await paymentHeader(`${a.url}/paid`, payer.privateKey);
  // Warm the other instance too (its first 402), so both meet the burst on equal terms.
  expect((await fetch(`${b.url}/paid`)).status).toBe(402);
  const before = await devnet.balanceOf(payer.address);

  const answers = await Promise.all(
    Array.from({ length: REQUESTS }, (_, i) =>
      getRaw(`${(i % 2 === 0 ? a : b).url}/paid`, { 'payment-signature': header }),
    ),
  );

  const ok = answers.filter((r) => r.status === 200);
  const busy = answers.filter((r) => r.status === 409);
  expect(ok.length + busy.length).toBe(REQUESTS);
  expect(ok.length).toBeGreaterThan(0);
  for (const r of busy) {
    expect(JSON.parse(r.body.toString())).toMatchObject({
      error: {
        code: 'payment_in_progress',
        retryable: true,
        retry: { instruction: 'retry_exact_payment_payload' },
      },
    });
  }
  // The handler ran once, in one instance; the payer paid once.
  const runs = readFileSync(log, 'utf8').trim().split('\n');
  expect(runs).toHaveLength(1);
  expect(before - (await devnet.balanceOf(payer.address))).toBe(LEDGER_PRICE);
  const transfers = await transfersFrom(devnet, payer.address);
  expect(transfers).toHaveLength(1);

  // Every 200 is the stored response, byte for byte, with the one receipt.
  const store = await openLedgerStore(ledgerUrl);
  let stored: Awaited<ReturnType<typeof store.get>>;
  try {
    [stored] = await store.query({ payer: payer.address });
  } finally {
    await store.close();
  }
  expect(stored).toMatchObject({ state: 'settled', transaction: transfers[0]!.transactionHash });
  const [instance, run] = runs[0]!.split(' ');
  expect(JSON.parse(Buffer.from(stored!.response!.body).toString())).toMatchObject({ instance, run });
  for (const r of ok) {
    expect(Buffer.compare(r.body, Buffer.from(stored!.response!.body))).toBe(0);
    expect(r.headers['payment-response']).toBe(stored!.response!.headers['payment-response']);
  }
  expect(decodeHeaderJson(ok[0]!.headers['payment-response']!)).toMatchObject({
    success: true,
    transaction: transfers[0]!.transactionHash,
  });
  // The settling instance is one of the two; the other answered its 25 from the shared store.
  expect([`${label}-a`, `${label}-b`]).toContain(instance);
  expect(stored!.owner.startsWith(`${instance}:`)).toBe(true);

  // Retrying a 409 later gets the stored 200 from either instance.
  for (const server of [a, b]) {
    const retry = await getRaw(`${server.url}/paid`, { 'payment-signature': header });
    expect(retry.status).toBe(200);
    expect(Buffer.compare(retry.body, Buffer.from(stored!.response!.body))).toBe(0);
  }
  expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
  await Promise.all([children.stop(a), children.stop(b)]);
  return { ok: ok.length, busy: busy.length };
}

describeWithService('two instances sharing Redis', rProblem, () => {
  it('run the handler and settle once for fifty concurrent copies of one payment', async () => {
    const counts = await samePayloadFiftyTimes(redisLedgerUrl(redisPrefix), 0, 'redis');
    console.info(`[ledger multi-instance] Redis: ${counts.ok} × 200, ${counts.busy} × 409`);
  });

  it('answer duplicates on the other instance 409 payment_in_progress when they may not wait', async () => {
    const counts = await samePayloadFiftyTimes(redisLedgerUrl(redisPrefix), 2, 'redis-nowait', 0);
    console.info(`[ledger multi-instance] Redis, no wait: ${counts.ok} × 200, ${counts.busy} × 409`);
    // The settling instance's own duplicates wait for it in-process; the other's cannot.
    expect(counts.busy).toBeGreaterThan(0);
  });
});

describeWithService('two instances sharing Postgres', pgProblem, () => {
  it('run the handler and settle once for fifty concurrent copies of one payment', async () => {
    const counts = await samePayloadFiftyTimes(postgresLedgerUrl(pgSchema), 1, 'postgres');
    console.info(`[ledger multi-instance] Postgres: ${counts.ok} × 200, ${counts.busy} × 409`);
  });
});
