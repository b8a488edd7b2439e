// The same facilitator against Circle's own FiatTokenV2_2 bytecode (real USDC code) on a devnet.
import type { PaymentRequirements } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExactEvmReason } from '../constants';
import { createExactEvmScheme } from '../server/create-exact-evm-scheme';
import { buildPayment, buildRequirements } from '../test-fixtures';
import {
  type CreateExactEvmFacilitatorReturnType,
  createExactEvmFacilitator,
} from './create-exact-evm-facilitator';

let devnet: Devnet;
let facilitator: CreateExactEvmFacilitatorReturnType;
let requirements: PaymentRequirements;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 84532, token: 'circle', payers: 1 });
  facilitator = createExactEvmFacilitator({
    account: devnet.accounts.facilitator.privateKey,
    chain: devnet.chain,
    rpcUrl: devnet.rpcUrl,
    pollingIntervalMs: 50,
  });
  // Base Sepolia: "$0.001" resolves to the canonical address with EIP-712 name "USDC".
  const price = createExactEvmScheme().resolvePrice('$0.001', 'eip155:84532');
  requirements = buildRequirements({
    network: 'eip155:84532',
    payTo: devnet.accounts.payTo.address,
    amount: price.amount,
    asset: price.asset,
    extra: price.extra,
  });
});
afterAll(async () => {
  await devnet?.stop();
});

describe("createExactEvmFacilitator with Circle's FiatTokenV2_2", () => {
  it('settles once, then refuses the replay with nonce_already_used', async () => {
    expect(devnet.token.address).toBe(requirements.asset);
    const account = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
    const payment = await buildPayment(account, requirements);
    const before = await devnet.balanceOf(account.address);
    expect(await facilitator.verify(payment, requirements)).toEqual({
      isValid: true,
      payer: account.address,
    });
    expect(await facilitator.settle(payment, requirements)).toMatchObject({ success: true, amount: '1000' });
    expect(before - (await devnet.balanceOf(account.address))).toBe(1000n);
    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: false,
      errorReason: ExactEvmReason.nonceAlreadyUsed,
    });
    expect(before - (await devnet.balanceOf(account.address))).toBe(1000n);
  });

  it('diagnoses a wrong EIP-712 name and a payer without funds', async () => {
    const account = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
    const wrongName = { ...requirements, extra: { name: 'USD Coin', version: '2' } };
    expect(await facilitator.verify(await buildPayment(account, wrongName), wrongName)).toMatchObject({
      isValid: false,
      invalidReason: ExactEvmReason.tokenNameMismatch,
    });
    const poor = privateKeyToAccount(generatePrivateKey());
    expect(await facilitator.verify(await buildPayment(poor, requirements), requirements)).toMatchObject({
      isValid: false,
      invalidReason: ExactEvmReason.insufficientBalance,
    });
  });
});
