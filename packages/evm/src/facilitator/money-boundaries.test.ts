// Two ways a payer could be charged other than the price, on a devnet of this file's own: an
// authorization for more than the price (the exact scheme takes exactly the price, never "at
// least"), and a token whose transferWithAuthorization succeeds without moving the value (the
// settlement is judged by the Transfer log, not by the receipt's status).
import type { PaymentPayload, PaymentRequirements } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { type Hex, toEventSelector } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExactEvmReason } from '../constants';
import { preVerifyExactEvmPayment } from '../server/pre-verify-exact-evm-payment';
import { buildPayment, buildRequirements } from '../test-fixtures';
import {
  type CreateExactEvmFacilitatorReturnType,
  createExactEvmFacilitator,
} from './create-exact-evm-facilitator';
import { settleExactEvmPayment } from './settle-exact-evm-payment';
import { verifyExactEvmPayment } from './verify-exact-evm-payment';

let devnet: Devnet;
let facilitator: CreateExactEvmFacilitatorReturnType;
let requirements: PaymentRequirements;
const now = () => Math.floor(Date.now() / 1000);
const payer = (i: number) => privateKeyToAccount(devnet.accounts.payers[i]!.privateKey);

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3 });
  facilitator = createExactEvmFacilitator({ ...devnet.facilitatorOptions, pollingIntervalMs: 50 });
  requirements = buildRequirements({ payTo: devnet.accounts.payTo.address, asset: devnet.token.address });
});
afterAll(async () => {
  await devnet?.stop();
});

const balances = async (address: Hex) => [
  await devnet.balanceOf(address),
  await devnet.balanceOf(devnet.accounts.payTo.address),
];

/**
 * A payment whose authorization is signed for `value` while it names the server's requirement as
 * accepted, as a client would that copies the requirement and signs a larger amount.
 */
async function signedFor(index: number, value: string): Promise<PaymentPayload> {
  const signed = await buildPayment(payer(index), { ...requirements, amount: value });
  return { ...signed, accepted: requirements };
}

describe('an authorization for more than the price', () => {
  it.each([
    ['one atomic unit more', '10001'],
    ['a thousand times the price', '10000000'],
  ])(
    'is refused with value_mismatch at pre-verify, verify and settle (%s), moving no money',
    async (_what, value) => {
      const payment = await signedFor(0, value);
      const reason = ExactEvmReason.valueMismatch;
      const before = await balances(payer(0).address);
      expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: now() })).toMatchObject({
        ok: false,
        reason,
      });
      expect(await facilitator.verify(payment, requirements)).toMatchObject({
        isValid: false,
        invalidReason: reason,
        payer: payer(0).address,
      });
      expect(await facilitator.settle(payment, requirements)).toMatchObject({
        success: false,
        errorReason: reason,
        transaction: '',
      });
      expect(await balances(payer(0).address)).toEqual(before);
    },
  );

  it('is settled for exactly the price when signed for exactly the price', async () => {
    const payment = await signedFor(1, requirements.amount);
    const [payerBefore, payToBefore] = await balances(payer(1).address);
    expect(await facilitator.settle(payment, requirements)).toMatchObject({ success: true, amount: '10000' });
    const [payerAfter, payToAfter] = await balances(payer(1).address);
    expect(payerBefore! - payerAfter!).toBe(10_000n);
    expect(payToAfter! - payToBefore!).toBe(10_000n);
  });
});

describe('a token that reports success without moving the value', () => {
  it('is answered transfer_event_mismatch with the transaction, and nothing moved', async () => {
    const client = devnet.clientFor(devnet.accounts.facilitator.privateKey);
    const payment = await buildPayment(payer(2), requirements);
    // The checks read the real token; then its code becomes a lone STOP: every call succeeds,
    // no state changes and no log is emitted.
    expect(await verifyExactEvmPayment({ client, payload: payment, requirements })).toMatchObject({
      isValid: true,
    });
    const before = await balances(payer(2).address);
    const code = await devnet.publicClient.getCode({ address: devnet.token.address });
    await devnet.testClient.setCode({ address: devnet.token.address, bytecode: '0x00' });
    let receipt: Awaited<ReturnType<typeof settleExactEvmPayment>>;
    try {
      receipt = await settleExactEvmPayment({ client, payload: payment, requirements });
    } finally {
      await devnet.testClient.setCode({ address: devnet.token.address, bytecode: code! });
    }
    expect(receipt).toEqual({
      success: false,
      errorReason: ExactEvmReason.transferEventMismatch,
      payer: payer(2).address,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: 'eip155:8453',
    });
    // The transaction was mined and succeeded: only its missing Transfer log tells.
    const mined = await devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction as Hex });
    expect(mined.status).toBe('success');
    expect(mined.logs).toEqual([]);
    expect(await balances(payer(2).address)).toEqual(before);
  });

  // The token's code is swapped for code that emits a Transfer log unlike the payment's (each part
  // read from the transferWithAuthorization call), or has another contract emit the right one.
  it.each<[string, (helper: Hex) => Hex]>([
    ['a Transfer of one unit more', () => emitTransfer({ from: 'from', to: 'to', plusOne: true })],
    ['a Transfer back to the payer', () => emitTransfer({ from: 'from', to: 'from' })],
    ['a Transfer from the recipient', () => emitTransfer({ from: 'to', to: 'to' })],
    ['the right Transfer, but emitted by another contract', (helper) => forwardTo(helper)],
  ])('is answered transfer_event_mismatch for %s, and nothing moved', async (_what, codeOf) => {
    const client = devnet.clientFor(devnet.accounts.facilitator.privateKey);
    const payment = await buildPayment(payer(2), requirements);
    expect(await verifyExactEvmPayment({ client, payload: payment, requirements })).toMatchObject({
      isValid: true,
    });
    const helper = privateKeyToAccount(generatePrivateKey()).address;
    await devnet.testClient.setCode({ address: helper, bytecode: emitTransfer({ from: 'from', to: 'to' }) });
    const before = await balances(payer(2).address);
    const code = await devnet.publicClient.getCode({ address: devnet.token.address });
    await devnet.testClient.setCode({ address: devnet.token.address, bytecode: codeOf(helper) });
    let receipt: Awaited<ReturnType<typeof settleExactEvmPayment>>;
    try {
      receipt = await settleExactEvmPayment({ client, payload: payment, requirements });
    } finally {
      await devnet.testClient.setCode({ address: devnet.token.address, bytecode: code! });
    }
    expect(receipt).toEqual({
      success: false,
      errorReason: ExactEvmReason.transferEventMismatch,
      payer: payer(2).address,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: 'eip155:8453',
    });
    // Mined with a Transfer log: only its emitter or its arguments tell it from a payment.
    const mined = await devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction as Hex });
    expect(mined.status).toBe('success');
    expect(mined.logs.map((log) => log.topics[0])).toEqual([TRANSFER_TOPIC]);
    expect(await balances(payer(2).address)).toEqual(before);
  });
});

const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)');
/** Offsets of `from` and `to` in the calldata of transferWithAuthorization (after the selector). */
const ARGUMENT = { from: '04', to: '24' } as const;

/**
 * Runtime code that, on any call, emits `Transfer(from, to, value)` and stops, each part read from
 * the calldata of transferWithAuthorization: `from` and `to` as named, the value plus one if asked.
 */
function emitTransfer(parts: { from: 'from' | 'to'; to: 'from' | 'to'; plusOne?: boolean }): Hex {
  return `0x${[
    '604435', // CALLDATALOAD(0x44): value
    parts.plusOne ? '600101' : '', // ADD 1
    '600052', // MSTORE(0, value)
    `60${ARGUMENT[parts.to]}35`, // topic 2
    `60${ARGUMENT[parts.from]}35`, // topic 1
    `7f${TRANSFER_TOPIC.slice(2)}`, // topic 0
    '60206000a3', // LOG3(0, 32, …)
    '00', // STOP
  ].join('')}`;
}

/** Runtime code that calls `target` with its own calldata and stops. */
function forwardTo(target: Hex): Hex {
  // CALLDATACOPY(0, 0, size); CALL(gas, target, 0, 0, size, 0, 0); STOP
  return `0x36600060003760006000366000600073${target.slice(2)}5af100`;
}
