import { type Devnet, startDevnet } from '@tollbooth/devnet';
import fc from 'fast-check';
import { type Address, createWalletClient, http, parseSignature } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { estimateContractGas } from 'viem/actions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTransferAuthorization } from '../client/sign-transfer-authorization';
import { eip3009Abi } from '../constants';
import { createAuthorizationNonce } from '../utils/create-authorization-nonce';
import { withHeadroom } from './settle-exact-evm-payment';

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
