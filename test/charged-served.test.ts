// Issue 23, part 6: charged ⇒ served, with real processes. The fee service (`npm start`'s entry,
// a child process killed with SIGKILL) in the production shape — an external facilitator by
// FACILITATOR_URL, a chain reader by RPC_URL — in front of the standalone `tollbooth-facilitator`
// (a child process, killed and restarted) behind the fault proxy, on anvil with the EIP-3009
// token. Four faults: a lost settle answer, a facilitator frozen on /settle then killed and
// restarted, a crash with payments in flight, an absolute-form paid request. After each, the
// exact payloads are retried; the chain judges: every authorization used at most once, every
// transfer is one of the test's payments, and every charged payment is answered 200 — naming its
// own transaction — within 60 s of the recovery.
//
// Matrix (docs/reliability.md): `npm test` runs every fault on fastify with a SQLite ledger;
// FAULT_MATRIX=spread adds express on PostgreSQL and koa on SQLite, FAULT_MATRIX=full runs all six
// framework × ledger pairs, FAULT_MATRIX=koa-postgres,… the pairs named.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { type FacilitatorFaultProxy, startFacilitatorFaultProxy } from '@tollbooth/facilitator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authKey, chainMark, chargesSince } from './support/fault-chain';
import {
  freePort,
  type Proc,
  Processes,
  startFacilitatorProcess,
  startFeeServiceProcess,
} from './support/fault-harness';
import { type Lineup, ledgerFactory, lineupName, lineups, SPREAD } from './support/fault-lineups';
import {
  type Answer,
  DECISION_PATH,
  DECISION_PRICE,
  decisionChallenge,
  type Payment,
  type RetryOutcome,
  rawRequest,
  refusalOf,
  retryUntilServed,
  sendPayment,
  servedTransaction,
  signPayment,
} from './support/fault-payments';
import { describeWithService, postgresProblem } from './support/ledger-harness';

/** The bound of the promise: served within this long after the recovery. */
const SERVED_WITHIN_MS = 60_000;
/** Per test: the bound, plus a service start on a loaded machine. */
const TEST_TIMEOUT_MS = 180_000;
/** How many paid requests are in flight when the service is killed. */
const IN_FLIGHT = 20;

const LINEUPS = lineups(process.env.FAULT_MATRIX, [SPREAD[0]!]);

const procs = new Processes();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-charged-served-'));
const pgProblem = await postgresProblem();
const ledgers = ledgerFactory(dir);
let devnet: Devnet;
let facilitator: Proc;
let facilitatorPort: number;
let proxy: FacilitatorFaultProxy;
let payerTurn = 0;

beforeAll(async () => {
  devnet = await startDevnet({ payers: 8 });
  facilitator = await startFacilitatorProcess(procs, devnet);
  facilitatorPort = Number(new URL(facilitator.url).port);
  proxy = await startFacilitatorFaultProxy({ target: facilitator.url });
});

afterAll(async () => {
  await procs.killAll();
  await proxy?.close();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  await ledgers.drop();
});

function nextPayerKey() {
  const payers = devnet.accounts.payers;
  return payers[payerTurn++ % payers.length]!.privateKey;
}

/** Resolves once `check` holds, polled every 20 ms (hang guard `timeoutMs`). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An answer that tells the payer to come back: a 5xx or 409 refusal marked retryable. */
function expectRetryable(answer: Answer) {
  expect(answer.status, answer.body).toBeGreaterThanOrEqual(409);
  expect(answer.status).not.toBe(200);
  expect(refusalOf(answer).retryable, answer.body).toBe(true);
}

/**
 * The chain's verdict over a window: exactly `payments` were charged, each once, by one transfer
 * of the price to payTo; and each was answered 200 naming its own transaction (body and receipt).
 */
async function expectChargedOnceAndServed(
  fromBlock: bigint,
  payments: Payment[],
  outcomes: RetryOutcome[],
  recoveredAt: number,
) {
  const chain = await chargesSince(devnet, fromBlock);
  for (const [index, payment] of payments.entries()) {
    const outcome = outcomes[index]!;
    const used = chain.used.get(authKey(payment.payer, payment.nonce)) ?? [];
    expect(used, `payment ${index}: charged once`).toHaveLength(1);
    expect(outcome.answer?.status, `payment ${index}: ${outcome.seen.join(', ')}`).toBe(200);
    expect(servedTransaction(outcome.answer!)).toEqual({ body: used[0], receipt: used[0] });
    expect(outcome.finishedAt - recoveredAt, `payment ${index}: served within the bound`).toBeLessThanOrEqual(
      SERVED_WITHIN_MS,
    );
  }
  expect(chain.used.size, 'no other authorization used').toBe(payments.length);
  expect(chain.transfers).toHaveLength(payments.length);
  for (const transfer of chain.transfers) expect(transfer.value).toBe(DECISION_PRICE);
  expect(new Set(chain.transfers.map((t) => t.transaction))).toEqual(
    new Set([...chain.used.values()].map((hashes) => hashes[0])),
  );
}

/** A first answer that was already the decision. */
const servedAt = (answer: Answer): RetryOutcome => ({
  answer,
  seen: [],
  elapsedMs: 0,
  finishedAt: Date.now(),
});

function lineupSuite({ framework, store }: Lineup) {
  const label = `${framework}-${store}`;
  let service: Proc;
  let port: number;
  let ledgerUrl: string;
  let challenge: PaymentRequired;

  const start = async () => {
    service = await startFeeServiceProcess(procs, devnet, {
      framework,
      ledgerUrl,
      facilitatorUrl: proxy.url,
      port,
      settleTimeoutMs: 5_000,
    });
  };

  beforeAll(async () => {
    port = await freePort();
    ledgerUrl = await ledgers.create(store, label);
    await start();
    challenge = await decisionChallenge(service.url);
  }, TEST_TIMEOUT_MS);
  afterAll(async () => {
    await service?.kill();
    proxy?.setMode('pass');
  }, TEST_TIMEOUT_MS);

  it(
    'absolute-form paid request: answered 200 and charged once, or refused before any charge',
    async () => {
      const from = await chainMark(devnet);
      const payment = await signPayment(challenge, nextPayerKey());
      const { host } = new URL(service.url);
      const head =
        `GET http://${host}${DECISION_PATH} HTTP/1.1\r\nHost: ${host}\r\n` +
        `Payment-Signature: ${payment.header}\r\nConnection: close\r\n\r\n`;
      const first = await rawRequest(service.url, head);
      expect(first.status, first.body).toBeLessThan(500);
      const chain = await chargesSince(devnet, from);
      if (chain.used.size === 0) {
        // Refused before any payment: a client error, and nothing moved.
        expect(first.status, first.body).toBe(400);
        expect(chain.transfers).toHaveLength(0);
        return;
      }
      // Charged: this answer is the decision, and the exact request again gets the same one.
      expect(first.status, first.body).toBe(200);
      await expectChargedOnceAndServed(from, [payment], [servedAt(first)], Date.now());
      const again = await rawRequest(service.url, head);
      expect(again.status, again.body).toBe(200);
      expect(servedTransaction(again)).toEqual(servedTransaction(first));
      expect((await chargesSince(devnet, from)).transfers).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'lost settle answer (the transfer landed): the retried payload is answered 200, charged once',
    async () => {
      const from = await chainMark(devnet);
      const payment = await signPayment(challenge, nextPayerKey());
      proxy.setMode('settle-answer-dropped');
      const settlesBefore = proxy.stats().forwarded.settle;
      const first = await sendPayment(service.url, payment);
      proxy.setMode('pass');
      expect(proxy.stats().forwarded.settle).toBe(settlesBefore + 1);
      // The transfer landed; the answer the facilitator gave never reached the service.
      expect((await chargesSince(devnet, from)).used.has(authKey(payment.payer, payment.nonce))).toBe(true);
      if (first.status !== 200) expectRetryable(first);
      const recoveredAt = Date.now();
      const outcome = first.status === 200 ? servedAt(first) : await retryUntilServed(service.url, payment);
      await expectChargedOnceAndServed(from, [payment], [outcome], recoveredAt);
      // Served on the chain's verdict: the settlement was not asked for again.
      expect(proxy.stats().forwarded.settle).toBe(settlesBefore + 1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'facilitator frozen on /settle, then killed and restarted: the retry reaches it and is served, charged once',
    async () => {
      const from = await chainMark(devnet);
      const payment = await signPayment(challenge, nextPayerKey());
      proxy.setMode({ mode: 'frozen', operations: ['settle'] });
      const first = await sendPayment(service.url, payment);
      expectRetryable(first);
      // The frozen facilitator dies with the settlement it held; nothing was broadcast.
      await facilitator.kill();
      proxy.setMode('pass');
      expect(proxy.stats().held).toBe(0);
      // While it is down, a retry is told to come back, and nothing moves.
      const whileDown = await sendPayment(service.url, payment);
      expectRetryable(whileDown);
      expect((await chargesSince(devnet, from)).used.size).toBe(0);

      const forwardedBefore = proxy.stats().forwarded.settle;
      facilitator = await startFacilitatorProcess(procs, devnet, facilitatorPort);
      const recoveredAt = Date.now();
      const outcome = await retryUntilServed(service.url, payment);
      // A /settle reached the restarted facilitator: the retry was not stuck on a stored failure.
      expect(proxy.stats().forwarded.settle).toBeGreaterThan(forwardedBefore);
      await expectChargedOnceAndServed(from, [payment], [outcome], recoveredAt);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    `crash (SIGKILL) with ${IN_FLIGHT} paid requests in flight: after the restart each is answered 200, charged once`,
    async () => {
      const from = await chainMark(devnet);
      const payments = await Promise.all(
        Array.from({ length: IN_FLIGHT }, () => signPayment(challenge, nextPayerKey())),
      );
      // Settlements land and their answers are held: the service is killed once half the payments
      // are charged with their answers held; the rest are anywhere between arrival and settlement
      // (the facilitator finishes what it was given after the kill).
      proxy.setMode('settle-answer-hung');
      const inFlight = payments.map((payment) => sendPayment(service.url, payment).catch(() => undefined));
      await until(
        'half the payments charged',
        async () => (await chargesSince(devnet, from)).used.size >= IN_FLIGHT / 2,
      );
      await service.kill();
      await Promise.all(inFlight);
      proxy.setMode('pass');

      await start();
      const recoveredAt = Date.now();
      const outcomes = await Promise.all(payments.map((payment) => retryUntilServed(service.url, payment)));
      await expectChargedOnceAndServed(from, payments, outcomes, recoveredAt);
    },
    TEST_TIMEOUT_MS,
  );
}

for (const lineup of LINEUPS) {
  const name = `charged ⇒ served: ${lineupName(lineup)}`;
  if (lineup.store === 'postgres') describeWithService(name, pgProblem, () => lineupSuite(lineup));
  else describe(name, () => lineupSuite(lineup));
}
