// The exact EVM scheme reads a payer's balance through its chain reader: what a `reserveBalance`
// route holds verified payments against (docs/ledger.md#one-balance-one-side-effect).
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
