import { type Devnet, startDevnet } from '@tollbooth/devnet';
import fc from 'fast-check';
import {
  createWalletClient,
  custom,
  type Hash,
  type Hex,
  HttpRequestError,
  http,
  parseTransaction,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettlementSender } from './settlement-sender';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 0 });
});
afterAll(async () => {
  await devnet?.stop();
});

async function rpc(method: string, params: unknown): Promise<unknown> {
  const response = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
  if (body.error) throw Object.assign(new Error(body.error.message), body.error);
  return body.result;
}

/** What the node does with one broadcast. */
type Answer = 'accept' | 'refuse' | 'stale-nonce' | 'answer-lost';

const answer = fc.constantFrom<Answer>('accept', 'accept', 'accept', 'refuse', 'stale-nonce', 'answer-lost');

describe('SettlementSender on a devnet', () => {
  it('leaves no nonce gap whatever the node refuses: every request is mined or refused, nothing waits in the pool', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(answer, { minLength: 1, maxLength: 24 }),
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }),
        async (answers, waves) => {
          // A fresh account per run: a sender of an earlier run still keeps its transactions alive.
          const account = privateKeyToAccount(generatePrivateKey());
          await devnet.testClient.setBalance({ address: account.address, value: 10n ** 18n });
          let call = 0;
          const seen = new Set<Hex>();
          // After the run the node answers normally: this run's sender may still be busy.
          let over = false;
          const client = createWalletClient({
            account,
            chain: devnet.chain,
            transport: custom(
              {
                async request({ method, params }) {
                  if (method !== 'eth_sendRawTransaction' || over) return rpc(method, params);
                  const raw = (params as Hex[])[0]!;
                  // The same bytes again get the node's own answer ("already known", "nonce too
                  // low"); a plain transfer to itself (a filler) is never refused: a node that
                  // refuses that has no gas money to settle anything with.
                  if (seen.has(raw) || parseTransaction(raw).to === account.address.toLowerCase())
                    return rpc(method, params);
                  seen.add(raw);
                  const what = answers[call++ % answers.length];
                  if (what === 'refuse')
                    throw Object.assign(new Error('insufficient funds for gas * price + value'), {
                      code: -32000,
                    });
                  if (what === 'stale-nonce')
                    throw Object.assign(new Error('nonce too low'), { code: -32000 });
                  const result = await rpc(method, params);
                  if (what === 'answer-lost')
                    throw new HttpRequestError({ url: devnet.rpcUrl, details: 'socket hang up' });
                  return result;
                },
              },
              { retryCount: 0 },
            ),
          });
          const sender = new SettlementSender(client, { pollingIntervalMs: 20, rebroadcastAfterMs: 300 });
          const outcomes: PromiseSettledResult<{ hash: Hash }>[] = [];
          for (const size of waves) {
            const wave = Array.from({ length: size }, () =>
              sender.send({ to: devnet.accounts.payTo.address, data: '0x', gas: 21_000n }),
            );
            outcomes.push(...(await Promise.allSettled(wave)));
          }
          for (const outcome of outcomes) {
            if (outcome.status === 'rejected') {
              expect(String(outcome.reason)).toMatch(/insufficient funds|nonce too low/);
              continue;
            }
            const receipt = await sender.waitForReceipt(outcome.value.hash, 15_000);
            expect(receipt?.status).toBe('success');
          }
          // Fillers and retries are mined too: the node holds nothing of ours that waits.
          const waiting = async () => {
            const pool = (await rpc('txpool_content', [])) as Record<string, Record<string, object>>;
            return Object.values(pool).flatMap((bySender) =>
              Object.keys(bySender[account.address.toLowerCase()] ?? {}),
            );
          };
          // Asked until the pool is empty: a loaded machine mines late, so only a hang guard (far
          // longer than any mining) bounds it, and a nonce gap that holds a transaction fails here.
          try {
            const guard = Date.now() + 20_000;
            while ((await waiting()).length > 0 && Date.now() < guard)
              await new Promise((r) => setTimeout(r, 20));
            expect(await waiting()).toEqual([]);
          } finally {
            over = true;
          }
        },
      ),
      { numRuns: 15 },
    );
  }, 180_000);
});

describe('SettlementSender when the node refuses every filler', () => {
  it('leaves the hole to the next settlement, so the transaction behind it and the next one are mined', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await devnet.testClient.setBalance({ address: account.address, value: 10n ** 18n });
    let sends = 0;
    const client = createWalletClient({
      account,
      chain: devnet.chain,
      transport: custom(
        {
          async request({ method, params }) {
            if (method === 'eth_sendRawTransaction') {
              const raw = (params as Hex[])[0]!;
              // A chain whose intrinsic gas is above 21 000 (zkSync, Arbitrum): no plain transfer passes.
              if (parseTransaction(raw).to === account.address.toLowerCase())
                throw Object.assign(new Error('intrinsic gas too low'), { code: -32000 });
              if (++sends === 2)
                throw Object.assign(new Error('insufficient funds for gas * price + value'), {
                  code: -32000,
                });
            }
            return rpc(method, params);
          },
        },
        { retryCount: 0 },
      ),
    });
    const sender = new SettlementSender(client, { pollingIntervalMs: 20, rebroadcastAfterMs: 300 });
    const to = devnet.accounts.payTo.address;
    // Sent in one tick: the first goes out alone, the other two in the next round, where the
    // node refuses the first and takes the second (a hole below it).
    const [a, b, c] = await Promise.allSettled([
      sender.send({ to, data: '0x', gas: 21_000n }),
      sender.send({ to, data: '0x', gas: 21_000n }),
      sender.send({ to, data: '0x', gas: 21_000n }),
    ]);
    expect(b.status).toBe('rejected');
    if (a.status !== 'fulfilled' || c.status !== 'fulfilled') throw new Error('a and c should be sent');
    expect(c.value.nonce).toBe(a.value.nonce! + 2);
    const d = await sender.send({ to, data: '0x', gas: 21_000n });
    expect(d.nonce).toBe(a.value.nonce! + 1);
    expect((await sender.waitForReceipt(c.value.hash, 2_000))?.status).toBe('success');
    expect((await sender.waitForReceipt(d.hash, 2_000))?.status).toBe('success');
  });
});

/** Resolves once every one of `hashes` is in the node's pool (asks it every 20 ms). */
async function poolHolds(hashes: readonly string[]): Promise<void> {
  for (;;) {
    const found = await Promise.all(hashes.map((hash) => rpc('eth_getTransactionByHash', [hash])));
    if (found.every((tx) => tx !== null)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('SettlementSender after the node lost its pool', () => {
  it('sends every lost transaction again at once, so the next block mines them all, not one per block', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await devnet.testClient.setBalance({ address: account.address, value: 10n ** 18n });
    const client = createWalletClient({ account, chain: devnet.chain, transport: http(devnet.rpcUrl) });
    const sender = new SettlementSender(client, { pollingIntervalMs: 20, rebroadcastAfterMs: 200 });
    const to = devnet.accounts.payTo.address;
    await devnet.setAutomine(false);
    try {
      const sent = await Promise.all(
        Array.from({ length: 4 }, () => sender.send({ to, data: '0x', gas: 21_000n })),
      );
      // Waited for as a settlement does; the receipts must come with the one block mined below.
      const waiting = sent.map((tx) => sender.waitForReceipt(tx.hash, 3_000));
      // A restart of the node: its pool is gone.
      await rpc('anvil_dropAllTransactions', []);
      // The sender notices and sends all four again; mine once the pool holds them all.
      await poolHolds(sent.map((tx) => tx.hash));
      await devnet.mine();
      const receipts = await Promise.all(waiting);
      expect(receipts.map((r) => r?.status)).toEqual(['success', 'success', 'success', 'success']);
    } finally {
      await devnet.setAutomine(true);
    }
  });
});

describe('SettlementSender on a node that serves a block number before its receipts', () => {
  it('asks for the receipt again at the same block, so a quiet chain (no next block) does not leave the wait hanging', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await devnet.testClient.setBalance({ address: account.address, value: 10n ** 18n });
    const lagging = new Set<string>();
    const asked: string[] = [];
    const client = createWalletClient({
      account,
      chain: devnet.chain,
      transport: custom(
        {
          async request({ method, params }) {
            if (method === 'eth_getTransactionReceipt') {
              const hash = (params as string[])[0]!;
              asked.push(hash);
              // A load-balanced RPC: the node that answered the block number has the receipt,
              // the one answering this first request for it does not yet.
              if (!lagging.has(hash)) {
                lagging.add(hash);
                return null;
              }
            }
            return rpc(method, params);
          },
        },
        { retryCount: 0 },
      ),
    });
    const sender = new SettlementSender(client, { pollingIntervalMs: 20, rebroadcastAfterMs: 60_000 });
    const sent = await sender.send({ to: devnet.accounts.payTo.address, data: '0x', gas: 21_000n });
    // Automine mined it at once and nothing else is sent: the block number stays where it is.
    const receipt = await sender.waitForReceipt(sent.hash, 5_000);
    expect(receipt?.status).toBe('success');
    // Asked twice at that block (the miss, then once more), not once per 20 ms tick.
    expect(asked.filter((h) => h === sent.hash)).toHaveLength(2);
  });
});
