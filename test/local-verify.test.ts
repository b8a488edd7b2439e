// GitHub issue 38 part 1: a route that settles after its handler verifies locally when its scheme
// reads the chain — the pre-verification (signature, amount, recipient, asset, window) plus one
// chain read of the payer's balance and the authorization's state (Multicall3 on the devnet) — and
// asks the facilitator's /verify without a chain reader, when `verifyBeforeSettle` says so, or when
// the chain read fails. A facilitator that refuses at /settle what local verify accepted (the fault
// proxy's `settle-refused`) costs the handler's work only: its answer is withheld, nothing charged.
// Real anvil, the real token, Tollbooth's facilitator behind the fault proxy, counted there.
import { type FaultKit, startFaultKit } from '@tollbooth/conformance';
import {
  createHttpFacilitatorClient,
  createMemoryLedgerStore,
  decodeHeaderJson,
  encodeHeader,
  type LedgerStore,
  type PaymentRequired,
} from '@tollbooth/core';
import type { Devnet } from '@tollbooth/devnet';
import { createExactEvmScheme, createPaymentPayload } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import express from 'express';
import { type Address, createPublicClient, custom, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Listening, listen } from './support/interop-harness';

const PRICE = 1_000n;
const MULTICALL3 = '0xca11bde05977b3631167028862be2a173976ca11';
/** `balanceOf(address)`. */
const BALANCE_OF = '0x70a08231';

let kit: FaultKit;
let devnet: Devnet;
beforeAll(async () => {
  kit = await startFaultKit();
  devnet = kit.devnet.devnet;
});
afterAll(async () => {
  await kit?.stop();
});

interface Server extends Listening {
  /** Times the paid handler ran. */
  ran(): number;
  ledger: LedgerStore;
}

type Reader = 'devnet' | 'none' | { failBalanceReads: () => boolean };

/** A Tollbooth-Express server whose `GET /paid` settles after its handler, paid through the proxy. */
async function startServer(reader: Reader, verifyBeforeSettle?: boolean): Promise<Server> {
  let ran = 0;
  const ledger = createMemoryLedgerStore();
  const publicClient =
    reader === 'none'
      ? undefined
      : reader === 'devnet'
        ? devnet.publicClient
        : createPublicClient({
            chain: devnet.chain,
            // The node as it is, but for the reads local verify makes while `failBalanceReads()`.
            transport: custom({
              request: async ({ method, params }) => {
                const [call] = (params ?? []) as [{ to?: string; data?: string }?];
                const balanceRead =
                  call?.to?.toLowerCase() === MULTICALL3 || call?.data?.startsWith(BALANCE_OF);
                if (method === 'eth_call' && balanceRead && reader.failBalanceReads())
                  throw new Error('the chain reader is down');
                return devnet.publicClient.request({ method, params } as never);
              },
            }),
          });
  const app = express();
  app.use(
    tollbooth({
      routes: {
        'GET /paid': {
          accepts: {
            network: `eip155:${devnet.chainId}`,
            payTo: devnet.accounts.payTo.address,
            price: {
              amount: String(PRICE),
              asset: devnet.token.address,
              extra: { name: devnet.token.name, version: devnet.token.version },
            },
          },
        },
      },
      schemes: [createExactEvmScheme(publicClient ? { publicClient } : {})],
      facilitator: createHttpFacilitatorClient({ url: kit.facilitatorUrl, timeoutMs: 5_000 }),
      ledger,
      reconcileIntervalMs: 0,
      ...(verifyBeforeSettle === undefined ? {} : { verifyBeforeSettle }),
    }),
  );
  app.get('/paid', (_req, res) => {
    ran += 1;
    res.json({ paid: true, secret: 'the handler answer' });
  });
  const listening = await listen(app);
  return { ...listening, ran: () => ran, ledger };
}

/** A fresh payer holding `balance`, and a signed payment for the server's challenge. */
async function payment(server: Server, balance = 10n * PRICE) {
  const account = privateKeyToAccount(generatePrivateKey());
  if (balance > 0n) await devnet.mint(account.address, balance);
  const unpaid = await fetch(`${server.url}/paid`);
  expect(unpaid.status).toBe(402);
  const paymentRequired = decodeHeaderJson(unpaid.headers.get('payment-required')!) as PaymentRequired;
  const payload = await createPaymentPayload({ paymentRequired, account });
  const { nonce } = (payload.payload as { authorization: { nonce: Hex } }).authorization;
  return { header: encodeHeader(payload), payer: account.address, nonce, before: balance };
}

async function pay(server: Server, header: string) {
  const response = await fetch(`${server.url}/paid`, { headers: { 'payment-signature': header } });
  const text = await response.text();
  const required = response.headers.get('payment-required');
  const code = required ? (decodeHeaderJson(required) as { error?: string }).error : undefined;
  return { status: response.status, text, code, receipt: response.headers.get('payment-response') };
}

/** The proxy's count of what reached the facilitator, from now on. */
function counting() {
  const at = structuredClone(kit.proxy.stats().received);
  return () => {
    const now = kit.proxy.stats().received;
    return { verify: now.verify - at.verify, settle: now.settle - at.settle };
  };
}

const used = (payer: Address, nonce: Hex) =>
  devnet.publicClient.readContract({
    address: devnet.token.address,
    abi: devnet.token.abi,
    functionName: 'authorizationState',
    args: [payer, nonce],
  }) as Promise<boolean>;

it('devnet: Multicall3 answers at its canonical address (local verify reads balance and state in one call)', async () => {
  const code = await devnet.publicClient.getCode({ address: MULTICALL3 as Address });
  expect(code && code.length > 2).toBe(true);
});

it('with a chain reader a settle-after route makes no /verify call: one facilitator round trip, charged once', async () => {
  const server = await startServer('devnet');
  try {
    const { header, payer, before } = await payment(server);
    const calls = counting();
    const answer = await pay(server, header);
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ paid: true, secret: 'the handler answer' });
    expect(answer.receipt).toBeTruthy();
    expect(calls()).toEqual({ verify: 0, settle: 1 });
    expect(before - (await devnet.balanceOf(payer))).toBe(PRICE);
  } finally {
    await server.close();
  }
});

it('verifyBeforeSettle: true, or no chain reader, asks /verify once before /settle', async () => {
  for (const [reader, verifyBeforeSettle] of [
    ['devnet', true],
    ['none', undefined],
  ] as const) {
    const server = await startServer(reader, verifyBeforeSettle);
    try {
      const { header, payer, before } = await payment(server);
      const calls = counting();
      const answer = await pay(server, header);
      expect(answer.status, answer.text).toBe(200);
      expect(calls(), `${reader} ${verifyBeforeSettle}`).toEqual({ verify: 1, settle: 1 });
      expect(before - (await devnet.balanceOf(payer))).toBe(PRICE);
    } finally {
      await server.close();
    }
  }
});

it("a balance read below the price is left to the facilitator's /verify, which refuses 402 before the handler", async () => {
  const server = await startServer('devnet');
  try {
    const { header, payer } = await payment(server, PRICE - 1n);
    const calls = counting();
    const answer = await pay(server, header);
    expect(answer.status, answer.text).toBe(402);
    expect(answer.code).toBe('payment_insufficient_funds');
    expect(server.ran()).toBe(0);
    // Our node's read alone never refuses a payer: it may lag behind the facilitator's.
    expect(calls()).toEqual({ verify: 1, settle: 0 });
    expect(await devnet.balanceOf(payer)).toBe(PRICE - 1n);
    // Nothing was charged, so nothing is kept: the claim was given back.
    expect(await server.ledger.query({ limit: 10 })).toEqual([]);
  } finally {
    await server.close();
  }
});

it('an authorization already used on chain is refused 402 payment_already_used before the handler', async () => {
  const first = await startServer('devnet');
  // Another server with a ledger of its own: only the chain knows the authorization was used.
  const second = await startServer('devnet');
  try {
    const { header, payer, nonce, before } = await payment(first);
    expect((await pay(first, header)).status).toBe(200);
    expect(await used(payer, nonce)).toBe(true);
    const calls = counting();
    const answer = await pay(second, header);
    expect(answer.status, answer.text).toBe(402);
    expect(answer.code).toBe('payment_already_used');
    expect(second.ran()).toBe(0);
    expect(calls()).toEqual({ verify: 0, settle: 0 });
    expect(before - (await devnet.balanceOf(payer))).toBe(PRICE);
  } finally {
    await first.close();
    await second.close();
  }
});

it('a chain read that fails falls back to /verify: the payer is served, never refused for the reader', async () => {
  let failing = true;
  const server = await startServer({ failBalanceReads: () => failing });
  try {
    const { header, payer, before } = await payment(server);
    const calls = counting();
    const answer = await pay(server, header);
    failing = false;
    expect(answer.status, answer.text).toBe(200);
    expect(calls()).toEqual({ verify: 1, settle: 1 });
    expect(before - (await devnet.balanceOf(payer))).toBe(PRICE);
  } finally {
    await server.close();
  }
});

it('a facilitator refusing at /settle what local verify accepted: the handler ran, its answer is withheld, nothing is charged', async () => {
  const server = await startServer('devnet');
  try {
    const { header, payer, nonce, before } = await payment(server);
    const calls = counting();
    kit.proxy.setMode('settle-refused');
    let answer: Awaited<ReturnType<typeof pay>>;
    try {
      answer = await pay(server, header);
    } finally {
      kit.proxy.setMode('pass');
    }
    expect(calls()).toEqual({ verify: 0, settle: 1 });
    expect(server.ran()).toBe(1);
    expect(answer.status, answer.text).toBe(402);
    expect(answer.code).toBe('payment_insufficient_funds');
    expect(answer.text).not.toContain('the handler answer');
    expect(await used(payer, nonce)).toBe(false);
    expect(await devnet.balanceOf(payer)).toBe(before);
    const entries = await server.ledger.query({ limit: 10 });
    expect(entries.map((e) => e.state)).toEqual(['rejected']);
    // The refusal is final: the exact payload retried with the facilitator healthy is refused
    // again, the handler does not run, and nothing moves.
    const again = await pay(server, header);
    expect(again.status, again.text).toBe(402);
    expect(again.text).not.toContain('the handler answer');
    expect(server.ran()).toBe(1);
    expect(await devnet.balanceOf(payer)).toBe(before);
  } finally {
    await server.close();
  }
});
