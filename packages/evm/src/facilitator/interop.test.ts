// Interoperability with the official x402 packages (dev dependencies): their client pays our
// requirements and our checks accept it; our client's payloads pass their facilitator.
import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
} from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as OfficialExactEvmClient } from '@x402/evm/exact/client';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmSchemeV1 as OfficialExactEvmClientV1 } from '@x402/evm/exact/v1/client';
import { createWalletClient, http, nonceManager, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentPayload } from '../client/create-payment-payload';
import { ExactEvmReason } from '../constants';
import { createExactEvmScheme } from '../server/create-exact-evm-scheme';
import { buildPaymentRequired, tamper } from '../test-fixtures';
import {
  type CreateExactEvmFacilitatorReturnType,
  createExactEvmFacilitator,
} from './create-exact-evm-facilitator';

let devnet: Devnet;
let ours: CreateExactEvmFacilitatorReturnType;
let official: x402Facilitator;
let requirements: PaymentRequirements;
const scheme = createExactEvmScheme();
const now = () => Math.floor(Date.now() / 1000);
const payer = (i: number) => privateKeyToAccount(devnet.accounts.payers[i]!.privateKey);

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3 });
  ours = createExactEvmFacilitator({
    account: devnet.accounts.facilitator.privateKey,
    chain: devnet.chain,
    rpcUrl: devnet.rpcUrl,
    pollingIntervalMs: 50,
  });
  // The official facilitator settles from another account, so the two never share a nonce.
  const wallet = createWalletClient({
    account: privateKeyToAccount(devnet.accounts.deployer.privateKey, { nonceManager }),
    chain: devnet.chain,
    transport: http(devnet.rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner(Object.assign(wallet, { address: wallet.account.address }) as never);
  official = registerExactEvmScheme(new x402Facilitator(), { signer, networks: 'eip155:8453' });
  // The devnet token sits at the canonical Base USDC address: "$0.01" resolves to it.
  const price = scheme.resolvePrice('$0.01', 'eip155:8453');
  requirements = {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: price.amount,
    asset: price.asset,
    payTo: devnet.accounts.payTo.address,
    maxTimeoutSeconds: 60,
    extra: price.extra,
  };
});
afterAll(async () => {
  await devnet?.stop();
});

describe('interoperability with the official x402 packages', () => {
  it('accepts a payment made by the official client: preVerify, verify and settle', async () => {
    const client = new x402Client().register('eip155:*', new OfficialExactEvmClient(payer(0)));
    const payment = (await client.createPaymentPayload(
      buildPaymentRequired([requirements]) as never,
    )) as PaymentPayload;
    expect(payment.accepted).toEqual(requirements);
    expect(scheme.preVerify(payment, requirements, now())).toMatchObject({
      ok: true,
      payer: payer(0).address,
    });
    expect(await ours.verify(payment, requirements)).toEqual({ isValid: true, payer: payer(0).address });
    const before = await devnet.balanceOf(payer(0).address);
    expect(await ours.settle(payment, requirements)).toMatchObject({ success: true, amount: '10000' });
    expect(before - (await devnet.balanceOf(payer(0).address))).toBe(10_000n);
  });

  it('makes payments the official facilitator verifies and settles', async () => {
    const payment = await createPaymentPayload({
      paymentRequired: buildPaymentRequired([requirements]),
      account: payer(1),
    });
    expect(await official.verify(payment as never, requirements as never)).toMatchObject({
      isValid: true,
      payer: payer(1).address,
    });
    const before = await devnet.balanceOf(payer(1).address);
    const settled = await official.settle(payment as never, requirements as never);
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453' });
    expect(before - (await devnet.balanceOf(payer(1).address))).toBe(10_000n);
    // And the official facilitator's settlement is what our reconciler finds on chain.
    const reconciler = createExactEvmScheme({ publicClient: devnet.publicClient });
    expect(await reconciler.reconcile!({ payload: payment, requirements, now: now() })).toMatchObject({
      status: 'settled',
      receipt: { transaction: settled.transaction },
    });
  });

  it.each<[string, (p: PaymentPayload) => [PaymentPayload, PaymentRequirements]]>([
    ['a tampered amount', (p) => [tamper(p, { value: '1' }), { ...requirements, amount: '1' }]],
    ['another recipient', (p) => [p, { ...requirements, payTo: devnet.accounts.deployer.address }]],
    ['an amount below the price', (p) => [p, { ...requirements, amount: '20000' }]],
    [
      'another network',
      (p) => [{ ...p, accepted: { ...p.accepted, network: 'eip155:84532' } }, requirements],
    ],
    ['a missing EIP-712 domain', (p) => [p, { ...requirements, extra: {} }]],
  ])('gives the same reason as the official facilitator for %s', async (_label, mutate) => {
    const good = await createPaymentPayload({
      paymentRequired: buildPaymentRequired([requirements]),
      account: payer(2),
    });
    const [payment, reqs] = mutate(good);
    const theirs = await official.verify(payment as never, reqs as never);
    const mine = await ours.verify(payment, reqs);
    expect(theirs.isValid).toBe(false);
    expect(mine).toMatchObject({ isValid: false, invalidReason: theirs.invalidReason });
    const local = scheme.preVerify(payment, reqs, now());
    expect(local).toMatchObject({ ok: false, reason: theirs.invalidReason });
  });

  it('gives the same reason as the official facilitator for a replayed authorization', async () => {
    const payment = await createPaymentPayload({
      paymentRequired: buildPaymentRequired([requirements]),
      account: payer(2),
    });
    expect(await ours.settle(payment, requirements)).toMatchObject({ success: true });
    const theirs = await official.verify(payment as never, requirements as never);
    expect(theirs).toMatchObject({ isValid: false, invalidReason: ExactEvmReason.nonceAlreadyUsed });
    expect(await ours.verify(payment, requirements)).toMatchObject({ invalidReason: theirs.invalidReason });
  });

  it('handles x402 v1: the official v1 client pays us, and the official facilitator accepts our v1 payload', async () => {
    const v1Requirements: PaymentRequirementsV1 = {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '10000',
      resource: 'https://api.example.com/paid',
      description: '',
      mimeType: 'application/json',
      payTo: devnet.accounts.payTo.address,
      maxTimeoutSeconds: 60,
      asset: requirements.asset,
      extra: { name: 'USD Coin', version: '2' },
    };
    const theirPayment = (await new OfficialExactEvmClientV1(payer(0)).createPaymentPayload(
      1,
      v1Requirements as never,
    )) as PaymentPayloadV1;
    expect(await ours.verify(theirPayment, v1Requirements)).toEqual({
      isValid: true,
      payer: payer(0).address,
    });
    expect(await ours.settle(theirPayment, v1Requirements)).toMatchObject({ success: true, network: 'base' });

    const ourPayment = await createPaymentPayload({
      paymentRequired: { x402Version: 1, error: '', accepts: [v1Requirements] },
      account: payer(1),
    });
    expect(await official.verify(ourPayment as never, v1Requirements as never)).toMatchObject({
      isValid: true,
    });
  });
});
