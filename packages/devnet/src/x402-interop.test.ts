// The devnet must satisfy the official x402 packages (dev dependencies, used here as peers).
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Devnet } from './devnet';
import { startDevnet } from './start-devnet';

// Real anvil processes: allow for a busy 2-core machine running every suite at once.
vi.setConfig({ testTimeout: 20_000, hookTimeout: 30_000 });

let devnet: Devnet;
let facilitator: x402Facilitator;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 2 });
  const client = devnet.clientFor(devnet.accounts.facilitator.privateKey);
  const signer = toFacilitatorEvmSigner(Object.assign(client, { address: client.account.address }) as never);
  facilitator = new x402Facilitator().register('eip155:8453', new ExactEvmFacilitatorScheme(signer));
});

afterAll(async () => {
  await devnet?.stop();
});

function requirements(amount: string): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount,
    asset: devnet.token.address,
    payTo: devnet.accounts.payTo.address,
    maxTimeoutSeconds: 60,
    extra: { name: devnet.token.name, version: devnet.token.version },
  };
}

async function pay(payerIndex: number, accepted: PaymentRequirements): Promise<PaymentPayload> {
  const payer = devnet.accounts.payers[payerIndex]!;
  const scheme = new ExactEvmClientScheme(
    toClientEvmSigner(privateKeyToAccount(payer.privateKey), devnet.publicClient as never),
  );
  const { payload } = await scheme.createPaymentPayload(2, accepted);
  return { x402Version: 2, payload, resource: { url: 'http://127.0.0.1/paid' }, accepted };
}

describe('the official x402 exact/EVM facilitator against the devnet', () => {
  it('verifies and settles a payment from the official client, then diagnoses its replay as a used nonce', async () => {
    const accepted = requirements('10000');
    const payment = await pay(0, accepted);
    const payer = devnet.accounts.payers[0]!.address;
    const before = await devnet.balanceOf(devnet.accounts.payTo.address);

    expect(await facilitator.verify(payment, accepted)).toMatchObject({ isValid: true, payer });
    const settled = await facilitator.settle(payment, accepted);
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453', payer });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await devnet.balanceOf(devnet.accounts.payTo.address)).toBe(before + 10_000n);

    expect(await facilitator.verify(payment, accepted)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_nonce_already_used',
    });
  });

  it('diagnoses a payment above the balance as insufficient balance (through Multicall3)', async () => {
    const accepted = requirements('1000000001');
    const result = await facilitator.verify(await pay(1, accepted), accepted);
    expect(result).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_insufficient_balance' });
  });
});
