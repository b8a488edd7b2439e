// The exact EVM scheme reads a payer's balance through its chain reader: what a `reserveBalance`
// route holds verified payments against (docs/ledger.md#one-balance-one-side-effect).
import type { PaymentRequirements } from '@tollbooth/core';
import { type Devnet, MULTICALL3_ADDRESS, startDevnet } from '@tollbooth/devnet';
import { createPublicClient, custom } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentPayload } from '../client/create-payment-payload';
import { createExactEvmFacilitator } from '../facilitator/create-exact-evm-facilitator';
import { createExactEvmScheme } from './create-exact-evm-scheme';

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 1 });
});
afterAll(async () => {
  await devnet?.stop();
});

describe('createExactEvmScheme().balanceOf', () => {
  it("reads the token balance now, from a client or an RPC URL of the payment's network", async () => {
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const input = { network: 'eip155:8453', asset: devnet.token.address, owner };
    const byClient = createExactEvmScheme({ publicClient: devnet.publicClient });
    const byUrl = createExactEvmScheme({ rpcUrl: { 'eip155:8453': devnet.rpcUrl } });
    expect(await byClient.balanceOf!(input)).toBe(0n);
    await devnet.mint(owner, 10_000n);
    // Never a cached answer: the mint is seen at once.
    expect(await byClient.balanceOf!(input)).toBe(10_000n);
    expect(await byUrl.balanceOf!(input)).toBe(10_000n);
  });

  it('throws rather than answer from a node of another chain, and is absent without a reader', async () => {
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const wrongNode = createExactEvmScheme({ rpcUrl: { 'eip155:84532': devnet.rpcUrl } });
    await expect(
      wrongNode.balanceOf!({ network: 'eip155:84532', asset: devnet.token.address, owner }),
    ).rejects.toThrow(/serves eip155:8453, not eip155:84532/);
    expect(createExactEvmScheme().balanceOf).toBeUndefined();
  });
});

describe('createExactEvmScheme().checkOnChain (local verify)', () => {
  /** A scheme reading the devnet, and the eth_calls it made. */
  function counted() {
    const calls: string[] = [];
    const publicClient = createPublicClient({
      chain: devnet.chain,
      transport: custom({
        request: ({ method, params }) => {
          if (method === 'eth_call') calls.push(String((params as [{ to: string }])[0].to).toLowerCase());
          return devnet.publicClient.request({ method, params } as never);
        },
      }),
    });
    return { scheme: createExactEvmScheme({ publicClient }), calls };
  }

  async function signed(
    balance: bigint,
    extra: { name: string; version: string } = { name: devnet.token.name, version: devnet.token.version },
  ) {
    const account = privateKeyToAccount(generatePrivateKey());
    if (balance > 0n) await devnet.mint(account.address, balance);
    const requirements: PaymentRequirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '1000',
      asset: devnet.token.address,
      payTo: devnet.accounts.payTo.address,
      maxTimeoutSeconds: 60,
      extra,
    };
    const payload = await createPaymentPayload({
      paymentRequired: { x402Version: 2, resource: { url: 'http://x.test/paid' }, accepts: [requirements] },
      account,
    });
    return { payload, requirements, payer: account.address };
  }

  it('reads balance and authorization state in one eth_call to Multicall3', async () => {
    const { scheme, calls } = counted();
    expect(await scheme.checkOnChain!(await signed(1000n))).toEqual({ status: 'valid' });
    expect(calls).toEqual([MULTICALL3_ADDRESS.toLowerCase()]);
    // A balance read below the amount is the facilitator's to judge (our node may lag behind).
    expect(await scheme.checkOnChain!(await signed(999n))).toMatchObject({
      status: 'unknown',
      message: expect.stringContaining('balance 999 read below 1000'),
    });
    // The token's DOMAIN_SEPARATOR() was read with the first payment only.
    expect(calls).toEqual([MULTICALL3_ADDRESS.toLowerCase(), MULTICALL3_ADDRESS.toLowerCase()]);
    const used = await signed(1000n);
    const facilitator = createExactEvmFacilitator({
      account: devnet.accounts.facilitator.privateKey as `0x${string}`,
      chain: devnet.chain,
      rpcUrl: devnet.rpcUrl,
      pollingIntervalMs: 50,
    });
    expect(await facilitator.settle(used.payload, used.requirements)).toMatchObject({ success: true });
    expect(await scheme.checkOnChain!(used)).toMatchObject({
      status: 'invalid',
      reason: 'invalid_exact_evm_nonce_already_used',
    });
  });

  it("a route whose EIP-712 name or version is not the token's domain is left to /verify", async () => {
    const { scheme } = counted();
    for (const extra of [
      { name: `${devnet.token.name} (wrong)`, version: devnet.token.version },
      { name: devnet.token.name, version: `${devnet.token.version}9` },
    ]) {
      const payment = await signed(1000n, extra);
      // The signature matches the route's (wrong) domain, so only the token's separator tells.
      expect(await scheme.checkOnChain!(payment)).toMatchObject({
        status: 'unknown',
        message: expect.stringContaining('DOMAIN_SEPARATOR()'),
      });
    }
    expect(await scheme.checkOnChain!(await signed(1000n))).toEqual({ status: 'valid' });
  });

  it('without Multicall3 at its address asks with separate eth_calls at once; a node that fails is unknown', async () => {
    const { scheme, calls } = counted();
    await devnet.testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: '0x' });
    expect(await scheme.checkOnChain!(await signed(1000n))).toEqual({ status: 'valid' });
    // balanceOf, authorizationState and (this client's first read of the token) DOMAIN_SEPARATOR().
    expect(calls.filter((to) => to !== MULTICALL3_ADDRESS.toLowerCase())).toHaveLength(3);
    calls.length = 0;
    expect(await scheme.checkOnChain!(await signed(1000n))).toEqual({ status: 'valid' });
    expect(calls).toHaveLength(2);
    const down = createExactEvmScheme({ rpcUrl: { 'eip155:8453': 'http://127.0.0.1:9' } });
    expect(await down.checkOnChain!(await signed(1000n))).toMatchObject({ status: 'unknown' });
  });
});
