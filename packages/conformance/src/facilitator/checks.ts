// Checks the facilitator audits share: refusals, on-chain effects of a settlement, and the proof
// that nothing moved.
import type { Address, Hash } from 'viem';
import { check, checkEqual } from '../audit-failure';
import { effectsOf } from './chain';
import { type FacilitatorAnswer, objectOf } from './endpoint';
import type { AuditPayment } from './payments';
import type { FacilitatorAuditContext } from './types';

export const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/** Balances of the payment's payer and recipient. */
export interface Balances {
  payer: bigint;
  payTo: bigint;
}

export async function balancesOf(ctx: FacilitatorAuditContext, payment: AuditPayment): Promise<Balances> {
  const [payer, payTo] = await Promise.all([
    ctx.chain.balanceOf(payment.authorization.from),
    ctx.chain.balanceOf(ctx.chain.config.payTo),
  ]);
  return { payer, payTo };
}

/** Fails unless a /verify answer refuses: below 500, `isValid: false` and a non-empty `invalidReason`. */
export function checkInvalid(answer: FacilitatorAnswer, what: string): Record<string, unknown> {
  check(answer.status < 500, `${what}: /verify answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  const body = objectOf(answer, `${what}: /verify`);
  checkEqual(body['isValid'], false, `${what}: isValid`);
  check(
    typeof body['invalidReason'] === 'string' && body['invalidReason'] !== '',
    `${what}: no invalidReason (${answer.text.slice(0, 200)})`,
  );
  return body;
}

/** Fails when the answer says the payment is valid (any status, JSON or not). */
export function checkNotValid(answer: FacilitatorAnswer, what: string): void {
  const body = answer.json as { isValid?: unknown } | undefined;
  check(
    !(answer.status < 300 && body?.isValid === true),
    `${what}: /verify answered isValid: true (${answer.text.slice(0, 200)})`,
  );
}

/** Fails when the payment's authorization was used or any of its balances moved since `before`. */
export async function checkNothingMoved(
  ctx: FacilitatorAuditContext,
  payment: AuditPayment,
  before: Balances,
  what: string,
): Promise<void> {
  const { from, nonce } = payment.authorization;
  check(!(await ctx.chain.authorizationUsed(from, nonce)), `${what}: the authorization was used on chain`);
  const after = await balancesOf(ctx, payment);
  checkEqual(after.payer, before.payer, `${what}: payer balance`);
  checkEqual(after.payTo, before.payTo, `${what}: payTo balance`);
}

/**
 * Fails unless a /settle answer claims success with a transaction hash and the network, and that
 * transaction, read on chain, succeeded and transferred exactly the amount once, using the
 * authorization; and the balances moved by exactly the amount since `before`.
 */
export async function checkSettled(
  ctx: FacilitatorAuditContext,
  payment: AuditPayment,
  answer: FacilitatorAnswer,
  before: Balances,
): Promise<Hash> {
  check(answer.status === 200, `/settle answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  const body = objectOf(answer, '/settle');
  checkEqual(body['success'], true, `success (errorReason ${JSON.stringify(body['errorReason'])})`);
  const transaction = body['transaction'];
  check(
    typeof transaction === 'string' && TX_HASH.test(transaction),
    `transaction is ${JSON.stringify(transaction)}`,
  );
  checkEqual(body['network'], networkOf(payment), 'network');
  await checkTransferredBy(ctx, payment, transaction as Hash);
  const after = await balancesOf(ctx, payment);
  const amount = BigInt(payment.authorization.value);
  checkEqual(before.payer - after.payer, amount, 'payer balance change on chain');
  checkEqual(after.payTo - before.payTo, amount, 'payTo balance change on chain');
  return transaction as Hash;
}

/** The network a payment's requirement names (v2 CAIP-2 or the v1 name). */
export function networkOf(payment: AuditPayment): string {
  return (payment.body.paymentRequirements as { network: string }).network;
}

/** Fails unless `transaction` is mined, succeeded, and carries exactly this payment's one transfer. */
export async function checkTransferredBy(
  ctx: FacilitatorAuditContext,
  payment: AuditPayment,
  transaction: Hash,
): Promise<Address> {
  const receipt = await ctx.chain.receipt(transaction);
  check(
    receipt,
    `transaction ${transaction} is not on chain ${ctx.chain.config.chainId} at ${ctx.chain.config.rpcUrl} (does the facilitator settle on this chain?)`,
  );
  checkEqual(receipt.status, 'success', `status of transaction ${transaction}`);
  const effects = effectsOf(ctx.chain, receipt, payment.authorization);
  checkEqual(effects.used, 1, `AuthorizationUsed events of the authorization in ${transaction}`);
  checkEqual(
    effects.transfers.join(','),
    payment.authorization.value,
    `Transfer events from the payer to payTo in ${transaction}`,
  );
  return effects.from;
}

/** Fails unless the authorization was used exactly once on chain since the run started. */
export async function checkUsedOnce(ctx: FacilitatorAuditContext, payment: AuditPayment): Promise<void> {
  const { from, nonce } = payment.authorization;
  checkEqual(
    await ctx.chain.usedLogs(from, nonce),
    1,
    'AuthorizationUsed events of the authorization on chain',
  );
}
