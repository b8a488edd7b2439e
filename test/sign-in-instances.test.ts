// Sign-in access outlives the process and is shared by instances (docs/sign-in-with-x.md): real
// server processes (ledger-crash-server.ts) behind one public URL (a small proxy in this process,
// as a load balancer would be), the official x402 client paying on the devnet. On SQLite the
// access bought before a restart still lets the payer in after it; on PostgreSQL two instances
// share it, and a proof one instance served is refused by the other.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { runLedgerCli } from '@tollbooth/ledger-cli';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { challengeOf, errorCodeOf, payerAccount } from './support/interop-harness';
import {
  ChildServers,
  describeWithService,
  dropPostgresSchema,
  ledgerAppConfig,
  newPostgresSchema,
  postgresLedgerUrl,
  postgresProblem,
  transfersFrom,
} from './support/ledger-harness';
import { officialProof, SIGN_IN_SECRET } from './support/sign-in-servers';

let devnet: Devnet;
const children = new ChildServers();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-sign-in-'));
const pgSchema = newPostgresSchema();
const pgProblem = await postgresProblem();

/**
 * One public URL in front of the instances. With two backends, requests carrying a sign-in proof
 * go to each in turn, and every other request (the challenge, a payment) to the backend the next
 * proof does not go to: each proof is signed over one instance's nonce and checked by the other.
 */
let proxy: { url: string; server: Server; backends: string[] };

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3 });
  const backends: string[] = [];
  let proofs = 0;
  const server = createServer((req, res) => {
    const signedIn = req.headers['sign-in-with-x'] !== undefined;
    const backend = backends[(signedIn ? proofs++ : proofs + 1) % backends.length]!;
    const target = new URL(req.url ?? '/', backend);
    const forward = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy = { url, server, backends };
});
afterAll(async () => {
  await children.killAll();
  proxy?.server.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.server.close(() => resolve()) : resolve()));
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (pgProblem === undefined) await dropPostgresSchema(pgSchema);
});

/** `tollbooth-ledger` with these arguments: its standard output (it must exit 0). */
async function ledgerCli(argv: string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await runLedgerCli(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  expect(code, stderr).toBe(0);
  return stdout.trim();
}

/** An instance process on `ledgerUrl`, serving under the proxy's public URL. */
function instance(instanceId: string, ledgerUrl: string) {
  const config = ledgerAppConfig(devnet, { instanceId, baseUrl: proxy.url, signInSecret: SIGN_IN_SECRET });
  return children.start(config, ledgerUrl);
}

/** The official client that signs in before it pays. */
function officialClient(payerIndex: number) {
  const account = payerAccount(devnet, payerIndex);
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(account));
  return wrapFetchWithPayment(wrapFetchWithSIWx(fetch, account), client);
}

/** Status, whether it was paid (a receipt), and the instance that answered. */
async function call(client: typeof fetch, path: string) {
  const response = await client(`${proxy.url}${path}`);
  const body = (await response.json()) as { instance?: string };
  return { status: response.status, paid: response.headers.has('payment-response'), instance: body.instance };
}

it('keeps the access a payment bought across a restart (SQLite)', async () => {
  const ledgerUrl = `sqlite:${join(dir, 'ledger.db')}`;
  const payer = payerAccount(devnet, 0);
  const pay = officialClient(0);
  const first = await instance('before', ledgerUrl);
  proxy.backends.splice(0, proxy.backends.length, first.url);
  expect(await call(pay, '/uses')).toEqual({ status: 200, paid: true, instance: 'before' });
  expect(await call(pay, '/uses')).toEqual({ status: 200, paid: false, instance: 'before' });
  expect(await call(pay, '/uses')).toEqual({ status: 200, paid: false, instance: 'before' });

  await children.stop(first);
  const second = await instance('after', ledgerUrl);
  proxy.backends.splice(0, proxy.backends.length, second.url);
  for (let i = 0; i < 3; i++)
    expect(await call(pay, '/uses'), `use ${i + 3}`).toEqual({ status: 200, paid: false, instance: 'after' });
  expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);

  // tollbooth-ledger shows the grant beside the payment that bought it.
  const [transfer] = await transfersFrom(devnet, payer.address);
  const access = await ledgerCli(['access', '--payer', payer.address, '--json', '--ledger', ledgerUrl]);
  const [grant] = JSON.parse(access) as Array<Record<string, unknown>>;
  expect(grant).toMatchObject({ route: 'GET /uses', payer: payer.address, uses: 5, used: 5 });
  expect(grant!['transaction']).toBe(transfer!.transactionHash);
  const shown = await ledgerCli(['show', String(grant!['payment']), '--ledger', ledgerUrl]);
  expect(shown).toMatch(/^state +settled$/m);
  expect(shown).toContain(
    `sign-in access bought:\n  GET /uses on eip155:8453 for ${payer.address}: 5/5 used`,
  );
  const table = await ledgerCli(['access', '--ledger', ledgerUrl]);
  expect(table.split('\n').at(-1)).toBe('1 grant');

  // Five uses spent: the next request pays again.
  expect(await call(pay, '/uses')).toEqual({ status: 200, paid: true, instance: 'after' });
  expect(await transfersFrom(devnet, payer.address)).toHaveLength(2);
});

describeWithService('two instances sharing PostgreSQL', pgProblem, () => {
  let a: Awaited<ReturnType<typeof instance>>;
  let b: Awaited<ReturnType<typeof instance>>;
  beforeAll(async () => {
    const ledgerUrl = postgresLedgerUrl(pgSchema);
    a = await instance('a', ledgerUrl);
    b = await instance('b', ledgerUrl);
    proxy.backends.splice(0, proxy.backends.length, a.url, b.url);
  });

  it('lets a payer who paid on one instance sign in on both, one transfer', async () => {
    const payer = payerAccount(devnet, 1);
    const pay = officialClient(1);
    const paid = await call(pay, '/pass');
    expect(paid).toMatchObject({ status: 200, paid: true });
    const answered = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const signedIn = await call(pay, '/pass');
      expect(signedIn, `sign-in ${i + 1}`).toMatchObject({ status: 200, paid: false });
      answered.add(signedIn.instance!);
    }
    expect([...answered].sort()).toEqual(['a', 'b']);
    expect(await transfersFrom(devnet, payer.address)).toHaveLength(1);
  });

  it('refuses on one instance a proof the other served (sign_in_nonce_used)', async () => {
    const challenge = challengeOf(await fetch(`${a.url}/pass`));
    const proof = await officialProof(challenge, payerAccount(devnet, 1), `${proxy.url}/pass`);
    const onA = await fetch(`${a.url}/pass`, { headers: { 'SIGN-IN-WITH-X': proof } });
    expect(onA.status).toBe(200);
    const onB = await fetch(`${b.url}/pass`, { headers: { 'SIGN-IN-WITH-X': proof } });
    expect(onB.status).toBe(402);
    expect(await errorCodeOf(onB)).toBe('sign_in_nonce_used');
  });
});
