import { type Devnet, startDevnet } from '@tollbooth/devnet';
import fc from 'fast-check';
import { type Address, createWalletClient, custom, type Hex, http, parseSignature } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { estimateContractGas } from 'viem/actions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTransferAuthorization } from '../client/sign-transfer-authorization';
import { ExactEvmReason, eip3009Abi } from '../constants';
import { buildPayment, buildRequirements } from '../test-fixtures';
import { createAuthorizationNonce } from '../utils/create-authorization-nonce';
import { settleExactEvmPayment, withHeadroom } from './settle-exact-evm-payment';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3, payerBalance: 2_000_000n });
});
afterAll(async () => {
  await devnet?.stop();
});

/** The gas the node estimates for settling one freshly signed payment. */
async function estimateSettlement(payerIndex: number, to: Address, value: bigint): Promise<bigint> {
  const payer = privateKeyToAccount(devnet.accounts.payers[payerIndex]!.privateKey);
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: payer.address,
    to,
    value: value.toString(),
    validAfter: String(now - 600),
    validBefore: String(now + 600),
    nonce: createAuthorizationNonce(),
  };
  const signature = await signTransferAuthorization({
    account: payer,
    domain: {
      name: devnet.token.name,
      version: devnet.token.version,
      chainId: devnet.chainId,
      verifyingContract: devnet.token.address,
    },
    authorization,
  });
  const { r, s, yParity } = parseSignature(signature);
  const client = createWalletClient({
    account: privateKeyToAccount(devnet.accounts.facilitator.privateKey),
    chain: devnet.chain,
    transport: http(devnet.rpcUrl),
  });
  return estimateContractGas(client, {
    address: devnet.token.address,
    abi: eip3009Abi,
    functionName: 'transferWithAuthorization',
    args: [
      authorization.from,
      authorization.to,
      value,
      BigInt(authorization.validAfter),
      BigInt(authorization.validBefore),
      authorization.nonce,
      27 + (yParity ?? 0),
      r,
      s,
    ],
  });
}

describe('the cached gas limit of transferWithAuthorization', () => {
  it('covers every payment of the asset when the first estimate was the cheapest kind (warm recipient)', async () => {
    await devnet.mint(devnet.accounts.payTo.address, 1n);
    const limit = withHeadroom(await estimateSettlement(0, devnet.accounts.payTo.address, 1_000n));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 }),
        fc.boolean(),
        // Up to the whole balance: a payer left with zero costs a different storage write.
        fc.bigInt({ min: 1n, max: 2_000_000n }),
        async (payerIndex, freshRecipient, value) => {
          const to = freshRecipient
            ? privateKeyToAccount(generatePrivateKey()).address
            : devnet.accounts.payTo.address;
          expect(await estimateSettlement(payerIndex, to, value)).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('adds half again, and at least 30 000', () => {
    expect(withHeadroom(50_000n)).toBe(80_000n);
    expect(withHeadroom(100_000n)).toBe(150_000n);
  });
});

describe('a settlement that runs out of gas behind a proxy (USDC is one)', () => {
  it('drops the cached gas limit, so the next payment of the asset is estimated afresh and settles', async () => {
    // The token's code behind a minimal proxy (EIP-1167) that keeps its storage: the delegatecall
    // gets 63/64 of the gas, and the proxy reverts with the rest (gas used below the limit).
    const token = devnet.token.address;
    const implementation = privateKeyToAccount(generatePrivateKey()).address;
    const code = (await devnet.publicClient.getCode({ address: token }))!;
    await devnet.testClient.setCode({ address: implementation, bytecode: code });
    await devnet.testClient.setCode({
      address: token,
      bytecode: `0x363d3d373d3d3d363d73${implementation.slice(2)}5af43d82803e903d91602b57fd5bf3` as Hex,
    });
    try {
      const account = privateKeyToAccount(generatePrivateKey());
      await devnet.testClient.setBalance({ address: account.address, value: 10n ** 18n });
      // An estimate that the asset's cost has outgrown (an upgrade, a costlier path).
      let staleEstimate = true;
      const client = createWalletClient({
        account,
        chain: devnet.chain,
        transport: custom({
          async request({ method, params }) {
            if (method === 'eth_estimateGas' && staleEstimate) return '0x2710';
            const response = await fetch(devnet.rpcUrl, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
            });
            const body = (await response.json()) as { result?: unknown; error?: { message: string } };
            if (body.error) throw Object.assign(new Error(body.error.message), body.error);
            // viem estimates a local account's transaction with eth_fillTransaction where it can.
            const filled = body.result as { tx?: { gas?: string } } | undefined;
            if (method === 'eth_fillTransaction' && staleEstimate && filled?.tx) filled.tx.gas = '0x2710';
            return body.result;
          },
        }),
      });
      const requirements = buildRequirements({ payTo: devnet.accounts.payTo.address, asset: token });
      const payer = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
      const settle = async () =>
        settleExactEvmPayment({
          client,
          payload: await buildPayment(payer, requirements),
          requirements,
          pollingIntervalMs: 20,
          receiptTimeoutMs: 5_000,
        });
      const first = await settle();
      expect(first).toMatchObject({ success: false, errorReason: ExactEvmReason.transactionFailed });
      expect(first.errorMessage).toMatch(/ran out of gas/);
      staleEstimate = false;
      expect(await settle()).toMatchObject({ success: true });
    } finally {
      await devnet.testClient.setCode({ address: token, bytecode: code });
    }
  });
});
