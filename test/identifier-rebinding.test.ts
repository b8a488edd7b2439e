// Issue 32, part 2: an identifier whose payment was released (its handler failed) is retried at
// once with the same payload on one instance and with a freshly signed payload (as the official
// client makes) on the other. Only one of the two may bind the identifier and settle: the chain
// shows one authorization used per identifier. Two server processes on each shared ledger
// (SQLite file, Redis, PostgreSQL), each settling from its own account on the devnet.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ChildServers,
  deleteRedisPrefix,
  describeWithService,
  dropPostgresSchema,
  errorCodeOf,
  getRaw,
  ledgerAppConfig,
  newPostgresSchema,
  newRedisPrefix,
  postgresLedgerUrl,
  postgresProblem,
  type RawResponse,
  redisLedgerUrl,
  redisProblem,
} from './support/ledger-harness';

/** Identifiers raced per ledger, and how many of them are in play at once. */
const IDENTIFIERS = 100;
const AT_ONCE = 10;

let devnet: Devnet;
const children = new ChildServers();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-rebinding-'));
const redisPrefix = newRedisPrefix();
const pgSchema = newPostgresSchema();
const [redisIssue, pgIssue] = await Promise.all([redisProblem(), postgresProblem()]);

beforeAll(async () => {
  // Per ledger: a payer, and a second settling account for the second instance.
  devnet = await startDevnet({ payers: 6 });
});
afterAll(async () => {
  await children.killAll();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (redisIssue === undefined) await deleteRedisPrefix(redisPrefix);
  if (pgIssue === undefined) await dropPostgresSchema(pgSchema);
});

/** A payment under `id` for the challenge: a fresh EIP-3009 nonce each call. */
async function sign(challenge: PaymentRequired, payerKey: Hex, id: string) {
  const paymentRequired = structuredClone(challenge);
  paymentRequired.extensions ??= {};
  appendPaymentIdentifierToExtensions(paymentRequired.extensions, id);
  const payload = await createPaymentPayload({ paymentRequired, account: privateKeyToAccount(payerKey) });
  const { nonce } = (payload.payload as { authorization: { nonce: Hex } }).authorization;
  return { header: encodeHeader(payload), nonce: nonce.toLowerCase() };
}

/** The nonces of the payer's authorizations the token shows used. */
async function usedNonces(payer: Address): Promise<string[]> {
  const logs = await devnet.publicClient.getContractEvents({
    address: devnet.token.address,
    abi: devnet.token.abi,
    eventName: 'AuthorizationUsed',
    args: { authorizer: payer },
    fromBlock: 0n,
  });
  return logs.map((log) => (log.args as { nonce: Hex }).nonce.toLowerCase());
}

interface Race {
  id: string;
  nonces: [string, string];
  answers: RawResponse[];
}

async function raceReleasedIdentifiers(ledgerUrl: string, label: string, payerIndex: number) {
  const payer = devnet.accounts.payers[payerIndex]!;
  const [a, b] = await Promise.all([
    children.start(ledgerAppConfig(devnet, { instanceId: `${label}-a` }), ledgerUrl),
    children.start(
      ledgerAppConfig(devnet, {
        instanceId: `${label}-b`,
        facilitatorKey: devnet.accounts.payers[payerIndex + 1]!.privateKey,
      }),
      ledgerUrl,
    ),
  ]);
  const unpaid = await fetch(`${a.url}/paid-id`);
  expect(unpaid.status).toBe(402);
  const challenge = decodeHeaderJson(unpaid.headers.get('payment-required')!) as PaymentRequired;
  expect((await fetch(`${b.url}/paid-id`)).status).toBe(402);

  const race = async (n: number): Promise<Race> => {
    const id = generatePaymentId(`race${n}_`);
    const [first, fresh] = await Promise.all([
      sign(challenge, payer.privateKey, id),
      sign(challenge, payer.privateKey, id),
    ]);
    // Released: verified, then the handler failed; nothing charged, the identifier free again.
    const failed = await getRaw(`${a.url}/paid-id`, {
      'payment-signature': first.header,
      'x-handler-fail': '1',
    });
    expect(failed.status).toBe(503);
    // The same payload on one instance, a fresh one on the other, at once (sides alternate).
    const [same, other] = n % 2 === 0 ? [a, b] : [b, a];
    const answers = await Promise.all([
      getRaw(`${same.url}/paid-id`, { 'payment-signature': first.header }),
      getRaw(`${other.url}/paid-id`, { 'payment-signature': fresh.header }),
    ]);
    return { id, nonces: [first.nonce, fresh.nonce], answers };
  };

  const races: Race[] = [];
  for (let start = 0; start < IDENTIFIERS; start += AT_ONCE) {
    const batch = Array.from({ length: Math.min(AT_ONCE, IDENTIFIERS - start) }, (_, i) => race(start + i));
    races.push(...(await Promise.all(batch)));
  }
  await Promise.all([children.stop(a), children.stop(b)]);

  const used = new Set(await usedNonces(payer.address));
  const chargedTwice = races.filter((r) => r.nonces.every((nonce) => used.has(nonce))).map((r) => r.id);
  const neverCharged = races.filter((r) => !r.nonces.some((nonce) => used.has(nonce))).map((r) => r.id);
  console.info(
    `[identifier rebinding] ${label}: ${chargedTwice.length} of ${IDENTIFIERS} identifiers charged twice`,
  );
  expect(chargedTwice).toEqual([]);
  expect(neverCharged).toEqual([]);
  // One answer per identifier: every 200 is the paid answer of its one payment; the other retry
  // waited for it, or was told the payment is in progress.
  for (const { answers } of races) {
    const ok = answers.filter((answer) => answer.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    for (const answer of ok) expect(Buffer.compare(answer.body, ok[0]!.body)).toBe(0);
    for (const answer of answers.filter((x) => x.status !== 200)) {
      expect([answer.status, errorCodeOf(answer.body)]).toEqual([409, 'payment_in_progress']);
    }
  }
}

it('binds a released identifier to one payment when the same and a fresh payload race on two instances sharing SQLite', async () => {
  await raceReleasedIdentifiers(`sqlite:${join(dir, 'ledger.db')}`, 'sqlite', 0);
}, 180_000);

describeWithService('two instances sharing Redis', redisIssue, () => {
  it('bind a released identifier to one payment when the same and a fresh payload race', async () => {
    await raceReleasedIdentifiers(redisLedgerUrl(redisPrefix), 'redis', 2);
  }, 180_000);
});

describeWithService('two instances sharing PostgreSQL', pgIssue, () => {
  it('bind a released identifier to one payment when the same and a fresh payload race', async () => {
    await raceReleasedIdentifiers(postgresLedgerUrl(pgSchema), 'postgres', 4);
  }, 180_000);
});
