// Issue 32, part 1: a facilitator that answers "failed" after its transfer landed, with real
// processes. The fee service (`npm start`'s entry, a child process) in the production shape — an
// external facilitator by FACILITATOR_URL, a chain reader by RPC_URL — in front of the standalone
// `tollbooth-facilitator` (a child process) behind the fault proxy, on anvil with the EIP-3009
// token. The proxy forwards /settle, the transfer lands, and it answers
// `{success: false, errorReason: "unexpected_settle_error"}` with HTTP 200 or 400 (as the official
// exact EVM facilitator does when the answer of its send is lost). The chain judges that refusal:
// the payment is served with its receipt on the first answer or on the retried exact payload,
// charged once, on a route that settles first and on one that settles after its handler, with or
// without a payment identifier; a freshly signed payload under the same identifier is answered from
// the payment that paid, never charged again; the ledger shows the entry settled with its
// transaction. Before the fix the first answer was 402 and the ledger said `rejected`.
//
// Lineups (test/support/fault-lineups.ts): `npm test` runs fastify on SQLite and express on
// PostgreSQL; FAULT_MATRIX=spread, full or a list of framework-store pairs as for charged-served.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import {
  type FacilitatorFaultMode,
  type FacilitatorFaultProxy,
  startFacilitatorFaultProxy,
} from '@tollbooth/facilitator';
import { openLedgerStore, runLedgerCli } from '@tollbooth/ledger-cli';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authKey, chainMark, chargesSince } from './support/fault-chain';
import {
  freePort,
  type Proc,
  Processes,
  startFacilitatorProcess,
  startFeeServiceProcess,
} from './support/fault-harness';
import { type Lineup, ledgerFactory, lineupName, lineups } from './support/fault-lineups';
import { DECISION_PATH, DECISION_PRICE, refusalOf } from './support/fault-payments';
import { describeWithService, postgresProblem } from './support/ledger-harness';

/** Per test: a service start on a loaded machine, and the retries' bound. */
const TEST_TIMEOUT_MS = 180_000;
/** Served within this long of the first answer when that was not already the paid one. */
const SERVED_WITHIN_MS = 60_000;
/** A paid route that settles after its handler (the decision settles first). */
const LANDSCAPE_PATH = '/api/v1/fees/landscape';
const LANDSCAPE_PRICE = 5000n;

const LINEUPS = lineups(process.env.FAULT_MATRIX, [
  { framework: 'fastify', store: 'sqlite' },
  { framework: 'express', store: 'postgres' },
]);

const procs = new Processes();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-false-failed-'));
const pgProblem = await postgresProblem();
const ledgers = ledgerFactory(dir);
let devnet: Devnet;
let proxy: FacilitatorFaultProxy;
let payerTurn = 0;
let identifierTurn = 0;

beforeAll(async () => {
  devnet = await startDevnet({ payers: 8 });
  const facilitator: Proc = await startFacilitatorProcess(procs, devnet);
  proxy = await startFacilitatorFaultProxy({ target: facilitator.url });
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await procs.killAll();
  await proxy?.close();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  await ledgers.drop();
});

interface Signed {
  payer: Address;
  nonce: Hex;
  header: string;
}

/** Signs a payment for the challenge (a fresh nonce), under the payment identifier if one is given. */
async function sign(challenge: PaymentRequired, payerKey: Hex, identifier?: string): Promise<Signed> {
  const required = structuredClone(challenge);
  if (identifier) {
    required.extensions ??= {};
    appendPaymentIdentifierToExtensions(required.extensions, identifier);
  }
  const account = privateKeyToAccount(payerKey);
  const payload = await createPaymentPayload({ paymentRequired: required, account });
  const { nonce } = (payload.payload as { authorization: { nonce: Hex } }).authorization;
  return { payer: account.address, nonce, header: encodeHeader(payload) };
}

interface Answer {
  status: number;
  body: string;
  /** The transaction of its PAYMENT-RESPONSE, when it has one. */
  receipt: string | undefined;
}

async function pay(url: string, header: string): Promise<Answer> {
  const response = await fetch(url, { headers: { 'payment-signature': header } });
  const receipt = response.headers.get('payment-response');
  return {
    status: response.status,
    body: await response.text(),
    receipt: receipt ? (decodeHeaderJson(receipt) as { transaction?: string }).transaction : undefined,
  };
}

/** The exact payload again until it is served, a refusal that is not retryable, or the bound. */
async function retryUntilServed(url: string, header: string): Promise<{ answer: Answer; seen: string[] }> {
  const started = Date.now();
  const seen: string[] = [];
  for (;;) {
    const answer = await pay(url, header);
    if (answer.status === 200) return { answer, seen };
    const refusal = refusalOf({ status: answer.status, headers: {}, body: answer.body });
    seen.push(`${answer.status} ${refusal.code ?? ''}`.trim());
    if (refusal.retryable !== true || Date.now() - started > SERVED_WITHIN_MS) return { answer, seen };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const CASES: Array<[FacilitatorFaultMode, string, 'identifier' | 'no identifier']> = [
  ['settle-failed-after-transfer', DECISION_PATH, 'no identifier'],
  ['settle-failed-400-after-transfer', DECISION_PATH, 'identifier'],
  ['settle-failed-after-transfer', LANDSCAPE_PATH, 'identifier'],
  ['settle-failed-400-after-transfer', LANDSCAPE_PATH, 'no identifier'],
];

function lineupSuite({ framework, store }: Lineup) {
  let service: Proc;
  let ledgerUrl: string;

  beforeAll(async () => {
    ledgerUrl = await ledgers.create(store, `${framework}-${store}`);
    service = await startFeeServiceProcess(procs, devnet, {
      framework,
      ledgerUrl,
      facilitatorUrl: proxy.url,
      port: await freePort(),
      settleTimeoutMs: 5_000,
    });
  }, TEST_TIMEOUT_MS);
  afterAll(async () => {
    await service?.kill();
    proxy?.setMode('pass');
  }, TEST_TIMEOUT_MS);

  it.each(CASES)(
    '%s on %s (%s): served with the receipt of its transfer, charged once',
    async (mode, path, withIdentifier) => {
      const url = `${service.url}${path}`;
      const price = path === DECISION_PATH ? DECISION_PRICE : LANDSCAPE_PRICE;
      const unpaid = await fetch(url);
      expect(unpaid.status).toBe(402);
      const challenge = decodeHeaderJson(unpaid.headers.get('payment-required')!) as PaymentRequired;
      const identifier =
        withIdentifier === 'identifier'
          ? `false-failed-${framework}-${store}-${identifierTurn++}-0000`
          : undefined;
      const payerKey = devnet.accounts.payers[payerTurn++ % devnet.accounts.payers.length]!.privateKey;
      const payment = await sign(challenge, payerKey, identifier);
      const from = await chainMark(devnet);

      proxy.setMode(mode);
      const settlesBefore = proxy.stats().forwarded.settle;
      let first: Answer;
      try {
        first = await pay(url, payment.header);
      } finally {
        proxy.setMode('pass');
      }
      expect(proxy.stats().forwarded.settle).toBe(settlesBefore + 1);
      // The transfer landed; the facilitator said it failed.
      const chain = await chargesSince(devnet, from);
      const used = chain.used.get(authKey(payment.payer, payment.nonce)) ?? [];
      expect(used).toHaveLength(1);
      expect(first.status, first.body.slice(0, 200)).not.toBe(402);

      const served = first.status === 200 ? first : (await retryUntilServed(url, payment.header)).answer;
      expect(served.status, served.body.slice(0, 200)).toBe(200);
      expect(served.receipt).toBe(used[0]);
      if (path === DECISION_PATH) {
        const body = JSON.parse(served.body) as { meta: { payment: { transaction_hash: string } } };
        expect(body.meta.payment.transaction_hash).toBe(used[0]);
      }
      // The exact payload again: the same paid answer, nothing settled again.
      const again = await pay(url, payment.header);
      expect(again.status).toBe(200);
      expect(again.receipt).toBe(used[0]);
      expect(again.body).toBe(served.body);

      if (identifier) {
        // A freshly signed payload under the same identifier (as the official client makes on a
        // retry): answered from the payment that paid, its own authorization never used.
        const fresh = await sign(challenge, payerKey, identifier);
        const retried = await pay(url, fresh.header);
        expect(retried.status, retried.body.slice(0, 200)).toBe(200);
        expect(retried.receipt).toBe(used[0]);
        expect((await chargesSince(devnet, from)).used.has(authKey(fresh.payer, fresh.nonce))).toBe(false);
      }

      const after = await chargesSince(devnet, from);
      expect(after.used.size, 'no other authorization used').toBe(1);
      expect(after.transfers.map((t) => [t.value, t.transaction])).toEqual([[price, used[0]]]);

      // The operator's view: settled with its transaction, nothing left uncertain.
      const ledger = await openLedgerStore(ledgerUrl);
      try {
        const entries = await ledger.query({ payer: payment.payer });
        const entry = entries.find((e) => e.id.endsWith(payment.nonce.toLowerCase()));
        expect(entry).toMatchObject({ state: 'settled', transaction: used[0] });
      } finally {
        await ledger.close();
      }
      const out: string[] = [];
      const code = await runLedgerCli(['uncertain', '--check', '-l', ledgerUrl], {
        stdout: (text) => void out.push(text),
        stderr: (text) => void out.push(text),
      });
      expect(code, out.join('')).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
}

for (const lineup of LINEUPS) {
  const name = `a facilitator's "failed" after its transfer landed: ${lineupName(lineup)}`;
  if (lineup.store === 'postgres') describeWithService(name, pgProblem, () => lineupSuite(lineup));
  else describe(name, () => lineupSuite(lineup));
}
