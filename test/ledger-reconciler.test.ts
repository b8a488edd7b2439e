// Issue 23 part 2: the background reconciler resolves what requests left unresolved without
// waiting for the payer. A process SIGKILLed while its settlement is in flight (the transfer lands
// after it died) leaves a `settling` entry: another instance takes it over once its lease ran out,
// a restarted instance with the same id at once; the chain says settled and the next retry of the
// exact payload gets the paid answer — the stored response for a route that settles after its
// handler, the handler run then for one that settles before it. An uncertain settlement of a live
// process is resolved by its own reconciler, no retry needed. Real devnet, real token, real child
// processes, real SQLite and Postgres.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, type LedgerEntry } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { openLedgerStore } from '@tollbooth/ledger-cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEDGER_PRICE } from './support/ledger-app';
import {
  ChildServers,
  describeWithService,
  dropPostgresSchema,
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
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-ledger-reconciler-'));
const pgSchema = newPostgresSchema();
const pgProblem = await postgresProblem();

beforeAll(async () => {
  devnet = await startDevnet({ payers: 5 });
});
afterAll(async () => {
  await children.killAll();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (pgProblem === undefined) await dropPostgresSchema(pgSchema);
});

const handlerRuns = (log: string) => readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);

/** Reads the ledger until `predicate` holds for the payer's entry (a hang guard, not a deadline). */
async function entryWhen(
  ledgerUrl: string,
  payer: string,
  predicate: (entry: LedgerEntry) => boolean,
  guardMs = 60_000,
): Promise<LedgerEntry> {
  const store = await openLedgerStore(ledgerUrl);
  try {
    const guard = Date.now() + guardMs;
    for (;;) {
      const [entry] = await store.query({ payer });
      if (entry && predicate(entry)) return entry;
      if (Date.now() > guard)
        throw new Error(`entry of ${payer} never matched: ${JSON.stringify(entry?.state)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await store.close();
  }
}

/** Resolves once the devnet's mempool holds `count` transactions (the facilitator broadcast). */
async function broadcastSeen(count: number): Promise<void> {
  for (;;) {
    const status = (await devnet.publicClient.request({ method: 'txpool_status' } as never)) as {
      pending: string;
    };
    if (Number(status.pending) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Child start-up under a loaded machine: a hang guard, not a deadline. */
const START_GUARD_MS = 120_000;

/**
 * Pays each `path` (with its own payer) on a child that is SIGKILLed once every settlement
 * transaction is broadcast and every entry `settling`; the transfers are mined after the process
 * died. Another instance (`alongside`) starts with it, to save a start-up: it sees the entries
 * only through the shared ledger.
 */
async function dieWhileSettling(
  ledgerUrl: string,
  payments: readonly { path: string; payerIndex: number }[],
  instanceId: string,
  log: string,
  options: { leaseMs?: number; alongside?: string } = {},
) {
  const [child, other] = await Promise.all([
    children.start(
      ledgerAppConfig(devnet, {
        instanceId,
        handlerLog: log,
        receiptTimeoutMs: 120_000,
        ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      }),
      ledgerUrl,
      START_GUARD_MS,
    ),
    options.alongside === undefined
      ? undefined
      : children.start(
          ledgerAppConfig(devnet, { instanceId: options.alongside, handlerLog: log }),
          ledgerUrl,
          START_GUARD_MS,
        ),
  ]);
  const paid = await Promise.all(
    payments.map(async ({ path, payerIndex }) => {
      const payer = devnet.accounts.payers[payerIndex]!;
      const header = await paymentHeader(`${child.url}${path}`, payer.privateKey);
      return { path, payer, header, before: await devnet.balanceOf(payer.address) };
    }),
  );
  await devnet.setAutomine(false);
  let left: LedgerEntry[];
  try {
    const requests = paid.map(({ path, header }) =>
      getRaw(`${child.url}${path}`, { 'payment-signature': header }).catch(() => undefined),
    );
    left = await Promise.all(
      paid.map(({ payer }) => entryWhen(ledgerUrl, payer.address, (entry) => entry.state === 'settling')),
    );
    await broadcastSeen(paid.length);
    process.kill(child.pid, 'SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await Promise.all(requests);
  } finally {
    await devnet.setAutomine(true);
  }
  const dead = [];
  for (const [index, payment] of paid.entries()) {
    if ((await transfersFrom(devnet, payment.payer.address)).length === 0) await devnet.mine();
    const [transfer] = await transfersFrom(devnet, payment.payer.address);
    expect(payment.before - (await devnet.balanceOf(payment.payer.address))).toBe(LEDGER_PRICE);
    dead.push({ ...payment, left: left[index]!, transaction: transfer!.transactionHash });
  }
  return { dead, other };
}

type DeadPayment = Awaited<ReturnType<typeof dieWhileSettling>>['dead'][number];

/** The dead process's `settling` entry, taken over and judged by `instance`, ends settled on chain. */
function expectResolvedBy(entry: LedgerEntry, instance: string, transaction: string) {
  expect(entry).toMatchObject({
    state: 'settled',
    transaction,
    resolution: { by: 'reconciler', instance, from: 'settling', action: 'confirmed-on-chain' },
  });
}

/** Charged once in all: one transfer of the price from the payer. */
async function chargedOnce(payment: DeadPayment) {
  expect(await transfersFrom(devnet, payment.payer.address)).toHaveLength(1);
  expect(payment.before - (await devnet.balanceOf(payment.payer.address))).toBe(LEDGER_PRICE);
}

/**
 * A route settling after its handler (`/paid`): the stored response is served. With `first`, a
 * route settling before it (`/first`) too: the handler runs on the next retry.
 */
async function deadInstanceResolvedByAnother(ledgerUrl: string, payers: number[], label: string) {
  const log = join(dir, `${label}.log`);
  writeFileSync(log, '');
  const paths = ['/paid', '/first'].slice(0, payers.length);
  const { dead, other } = await dieWhileSettling(
    ledgerUrl,
    paths.map((path, i) => ({ path, payerIndex: payers[i]! })),
    `${label}-a`,
    log,
    { alongside: `${label}-b` },
  );
  const [after, before] = dead;
  expect(after!.left.owner).toMatch(new RegExp(`^${label}-a:`));
  // The handler of /paid ran and its response was stored before the settle call; /first's has not run.
  expect(handlerRuns(log)).toEqual([expect.stringMatching(new RegExp(`^${label}-a `))]);
  expect(after!.left.response?.status).toBe(200);
  if (before) expect(before.left.response).toBeUndefined();

  // No retry: the other instance's reconciler takes the entries over once the dead owner's lease ran out.
  const resolved = await Promise.all(
    dead.map((d) => entryWhen(ledgerUrl, d.payer.address, (entry) => entry.state === 'settled')),
  );
  for (const [index, entry] of resolved.entries()) {
    expectResolvedBy(entry, `${label}-b`, dead[index]!.transaction);
    expect(entry.resolution!.at).toBeGreaterThanOrEqual(dead[index]!.left.leaseUntil);
  }
  expect(resolved[0]!.response?.status).toBe(200);

  const retry = await getRaw(`${other!.url}/paid`, { 'payment-signature': after!.header });
  expect(retry.status).toBe(200);
  expect(JSON.parse(retry.body.toString())).toMatchObject({ paid: true, instance: `${label}-a` });
  expect(Buffer.compare(retry.body, Buffer.from(resolved[0]!.response!.body))).toBe(0);
  expect(decodeHeaderJson(retry.headers['payment-response']!)).toMatchObject({
    success: true,
    transaction: after!.transaction,
  });
  expect(handlerRuns(log)).toHaveLength(1);
  await chargedOnce(after!);

  if (before) {
    expect(resolved[1]!.response).toBeUndefined();
    expect(resolved[1]!.leaseUntil).toBe(0);
    const first = await getRaw(`${other!.url}/first`, { 'payment-signature': before.header });
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body.toString())).toMatchObject({ paid: true, instance: `${label}-b` });
    expect(decodeHeaderJson(first.headers['payment-response']!)).toMatchObject({
      success: true,
      transaction: before.transaction,
    });
    expect(handlerRuns(log)).toHaveLength(2);
    // Its answer is now the stored paid answer: the next retry gets the same bytes, the handler runs no more.
    const again = await getRaw(`${other!.url}/first`, { 'payment-signature': before.header });
    expect(again.status).toBe(200);
    expect(Buffer.compare(again.body, first.body)).toBe(0);
    expect(handlerRuns(log)).toHaveLength(2);
    await chargedOnce(before);
  }
  await children.stop(other!);
}

describe('the reconciler on a SQLite ledger shared by processes', () => {
  it("resolves a SIGKILLed instance's settlements on another instance once the lease ran out: the retry gets the stored answer, or runs the handler of a route that settles first", async () => {
    await deadInstanceResolvedByAnother(`sqlite:${join(dir, 'dead.db')}`, [0, 1], 'dead');
  }, 180_000);

  it('resumes its own settlement on restart at once, long before the dead life’s lease runs out', async () => {
    const ledgerUrl = `sqlite:${join(dir, 'restart.db')}`;
    const log = join(dir, 'restart.log');
    writeFileSync(log, '');
    const leaseMs = 120_000;
    const {
      dead: [dead],
    } = await dieWhileSettling(ledgerUrl, [{ path: '/paid', payerIndex: 2 }], 'same', log, { leaseMs });
    const restarted = await children.start(
      ledgerAppConfig(devnet, { instanceId: 'same', handlerLog: log, leaseMs }),
      ledgerUrl,
      START_GUARD_MS,
    );
    const resolved = await entryWhen(ledgerUrl, dead!.payer.address, (entry) => entry.state === 'settled');
    expectResolvedBy(resolved, 'same', dead!.transaction);
    expect(resolved.resolution!.at).toBeLessThan(dead!.left.leaseUntil);
    const retry = await getRaw(`${restarted.url}/paid`, { 'payment-signature': dead!.header });
    expect(retry.status).toBe(200);
    expect(Buffer.compare(retry.body, Buffer.from(resolved.response!.body))).toBe(0);
    expect(handlerRuns(log)).toHaveLength(1);
    await chargedOnce(dead!);
    await children.stop(restarted);
  }, 180_000);

  it('resolves an uncertain settlement of a live instance without a retry, and the retry gets the stored answer', async () => {
    const ledgerUrl = `sqlite:${join(dir, 'uncertain.db')}`;
    const log = join(dir, 'uncertain.log');
    writeFileSync(log, '');
    const payer = devnet.accounts.payers[3]!;
    const live = await children.start(
      ledgerAppConfig(devnet, { instanceId: 'live', handlerLog: log, receiptTimeoutMs: 500 }),
      ledgerUrl,
      START_GUARD_MS,
    );
    const header = await paymentHeader(`${live.url}/paid`, payer.privateKey);
    await devnet.setAutomine(false);
    let pending: Awaited<ReturnType<typeof getRaw>>;
    try {
      pending = await getRaw(`${live.url}/paid`, { 'payment-signature': header });
    } finally {
      await devnet.setAutomine(true);
    }
    expect(pending.status).toBe(502);
    if ((await transfersFrom(devnet, payer.address)).length === 0) await devnet.mine();
    const [transfer] = await transfersFrom(devnet, payer.address);
    const resolved = await entryWhen(ledgerUrl, payer.address, (entry) => entry.state === 'settled');
    expect(resolved).toMatchObject({
      transaction: transfer!.transactionHash,
      resolution: { by: 'reconciler', instance: 'live', from: 'uncertain', action: 'confirmed-on-chain' },
    });
    const retry = await getRaw(`${live.url}/paid`, { 'payment-signature': header });
    expect(retry.status).toBe(200);
    expect(Buffer.compare(retry.body, Buffer.from(resolved.response!.body))).toBe(0);
    expect(handlerRuns(log)).toHaveLength(1);
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
    await children.stop(live);
  }, 180_000);
});

describeWithService('the reconciler on a Postgres ledger shared by processes', pgProblem, () => {
  it("resolves a SIGKILLed instance's settlement on another instance once the lease ran out, and the retry gets the stored answer", async () => {
    await deadInstanceResolvedByAnother(postgresLedgerUrl(pgSchema), [4], 'pg');
  }, 180_000);
});
