// Issue 32, part 3: one balance never buys two side effects. A payer whose balance holds exactly
// one broadcast's price sends ten distinct valid transactions at once, each with its own valid
// authorization, to the fee service (`npm start`'s entry, child processes) in the production shape
// — the standalone `tollbooth-facilitator` by FACILITATOR_URL, a chain reader by RPC_URL, anvil
// with the EIP-3009 token — whose broadcasts go to one mempool simulator (MEMPOOL_URL). The
// broadcast reserves the payer's balance before its handler (docs/reliability.md): one handler
// runs (one transaction reaches the node), one transfer lands, the other nine are refused with 402
// before their handler. On SQLite, on PostgreSQL, and on two instances sharing PostgreSQL. Before
// the reservation every verified request ran its handler: ten broadcasts for one transfer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type MempoolSimulator, startMempoolSimulator } from '../examples/fee-service/src/simulator/server';
import { faucetSpend } from '../examples/fee-service/test/fixtures/raw-tx';
import { chainMark, chargesSince } from './support/fault-chain';
import {
  type Framework,
  freePort,
  type Proc,
  Processes,
  startFacilitatorProcess,
  startFeeServiceProcess,
} from './support/fault-harness';
import { ledgerFactory, type Store } from './support/fault-lineups';
import { refusalOf } from './support/fault-payments';
import { describeWithService, postgresProblem } from './support/ledger-harness';

const TEST_TIMEOUT_MS = 180_000;
const BROADCAST_PATH = '/api/v1/broadcast';
/** The broadcast's price, 0.01 USDC in atomic units. */
const BROADCAST_PRICE = 10_000n;
/** Concurrent side-effecting requests from one balance. */
const K = 10;

const procs = new Processes();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-one-balance-'));
const pgProblem = await postgresProblem();
const ledgers = ledgerFactory(dir);
let devnet: Devnet;
let simulator: MempoolSimulator;
let facilitator: Proc;
/** The next faucet output a broadcast spends: every transaction of the run is distinct and valid. */
let faucetOutput = 0;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 1 }), startMempoolSimulator({ seed: 7 })]);
  facilitator = await startFacilitatorProcess(procs, devnet);
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await procs.killAll();
  await Promise.all([devnet?.stop(), simulator?.close()]);
  rmSync(dir, { recursive: true, force: true });
  await ledgers.drop();
});

/** Fee-service processes on one ledger, broadcasting to the shared simulator. */
async function startInstances(frameworks: Framework[], store: Store, label: string): Promise<Proc[]> {
  const ledgerUrl = await ledgers.create(store, label);
  const started: Proc[] = [];
  // One after the other: the first migrates the ledger.
  for (const framework of frameworks) {
    started.push(
      await startFeeServiceProcess(procs, devnet, {
        framework,
        ledgerUrl,
        facilitatorUrl: facilitator.url,
        port: await freePort(),
        env: { MEMPOOL_URL: simulator.url },
      }),
    );
  }
  return started;
}

/** Whether the simulator's node has a transaction (in its mempool or a block). */
async function nodeHas(txid: string): Promise<boolean> {
  return (await fetch(`${simulator.url}/api/tx/${txid}`)).status === 200;
}

/**
 * A fresh payer holding exactly one broadcast's price sends K broadcasts of distinct valid
 * transactions at once, spread over `instances`, each paid with its own authorization.
 */
async function burst(instances: Proc[]) {
  const account = privateKeyToAccount(generatePrivateKey());
  await devnet.mint(account.address, BROADCAST_PRICE);
  const transactions = Array.from({ length: K }, () =>
    faucetSpend(simulator.model, { output: faucetOutput++ }),
  );
  const unpaid = await fetch(`${instances[0]!.url}${BROADCAST_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ hex: transactions[0]!.hex }),
  });
  expect(unpaid.status).toBe(402);
  const challenge = decodeHeaderJson(unpaid.headers.get('payment-required')!) as PaymentRequired;
  expect(challenge.accepts[0]!.amount).toBe(String(BROADCAST_PRICE));
  const headers = await Promise.all(
    transactions.map(async () =>
      encodeHeader(await createPaymentPayload({ paymentRequired: structuredClone(challenge), account })),
    ),
  );
  const mark = await chainMark(devnet);
  const answers = await Promise.all(
    transactions.map(async (tx, i) => {
      const response = await fetch(`${instances[i % instances.length]!.url}${BROADCAST_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': headers[i]! },
        body: JSON.stringify({ hex: tx.hex }),
      });
      const body = await response.text();
      const refusal = refusalOf({ status: response.status, headers: {}, body });
      const required = response.headers.get('payment-required');
      const code = required ? (decodeHeaderJson(required) as { error?: string }).error : refusal.code;
      return { status: response.status, code };
    }),
  );
  const reached = (await Promise.all(transactions.map((tx) => nodeHas(tx.txid)))).filter(Boolean).length;
  const charges = await chargesSince(devnet, mark);
  const transfers = charges.transfers.filter((t) => t.from.toLowerCase() === account.address.toLowerCase());
  return { answers, reached, transfers };
}

async function expectOneSideEffect(instances: Proc[], label: string) {
  const { answers, reached, transfers } = await burst(instances);
  const statuses = answers.map((a) => `${a.status} ${a.code ?? ''}`.trim());
  console.info(
    `[one balance] ${label}: ${reached} of ${K} broadcasts reached the node, ${transfers.length} transfer(s); answers ${statuses.sort().join(', ')}`,
  );
  expect(reached).toBe(1);
  expect(transfers).toHaveLength(1);
  expect(transfers[0]!.value).toBe(BROADCAST_PRICE);
  expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
  // The others never ran their handler: refused before it (the balance is held), or, once the one
  // payment settled, by the facilitator's verify (the balance is spent).
  for (const answer of answers.filter((a) => a.status !== 200))
    expect(['402 payment_balance_reserved', '402 payment_insufficient_funds']).toContain(
      `${answer.status} ${answer.code}`,
    );
  expect(answers.some((a) => a.code === 'payment_balance_reserved')).toBe(true);
}

it(
  `broadcasts once for ${K} concurrent paid broadcasts from a balance for one (fastify on SQLite)`,
  async () => {
    const instances = await startInstances(['fastify'], 'sqlite', 'fastify-sqlite');
    await expectOneSideEffect(instances, 'fastify on SQLite');
    await Promise.all(instances.map((instance) => instance.kill()));
  },
  TEST_TIMEOUT_MS,
);

describeWithService('PostgreSQL', pgProblem, () => {
  it(
    `broadcasts once for ${K} concurrent paid broadcasts from a balance for one (express on PostgreSQL)`,
    async () => {
      const instances = await startInstances(['express'], 'postgres', 'express-postgres');
      await expectOneSideEffect(instances, 'express on PostgreSQL');
      await Promise.all(instances.map((instance) => instance.kill()));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    `broadcasts once for ${K} concurrent paid broadcasts spread over two instances sharing PostgreSQL (koa, fastify)`,
    async () => {
      const instances = await startInstances(['koa', 'fastify'], 'postgres', 'two-postgres');
      await expectOneSideEffect(instances, 'koa + fastify sharing PostgreSQL');
      await Promise.all(instances.map((instance) => instance.kill()));
    },
    TEST_TIMEOUT_MS,
  );
});
