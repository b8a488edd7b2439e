// Part of gate step 8 of 8 (settle-step): what the chain makes of a facilitator's settle refusal.
import type { SettleResponse } from '../protocol/schemas';
import { askChain } from '../reconciler/ask-chain';
import { showsTransfer } from '../scheme';
import { codeForReason } from './match-requirements';
import { chainQuestion, type PaymentContext } from './payment-context';
import type { GateRuntime } from './runtime';

/**
 * What the chain makes of a facilitator's settle refusal:
 * - `transferred`: the transfer is on chain after all (the facilitator's answer was wrong): serve
 *   on the chain's receipt;
 * - `unknown`: the chain cannot tell, or shows nothing yet while a transaction the facilitator
 *   may have broadcast could still land: keep the payment for the reconciler and the retry;
 * - `refused`: nothing moved and nothing can any more (or the refusal says nothing was sent):
 *   the refusal stands.
 */
export type RefusalVerdict =
  | { kind: 'transferred'; receipt: SettleResponse }
  | { kind: 'unknown'; message: string }
  | { kind: 'refused'; chain: 'unsettled' | 'expired' | 'not asked' };

/**
 * Whether the gate can ask the chain about this payment: its scheme has a chain reader for the
 * network (a scheme without `hasChainReader` counts as having one for every network it serves).
 */
export function canAskChain(ctx: Pick<PaymentContext, 'scheme' | 'v2Requirement'>): boolean {
  return (
    ctx.scheme.reconcile !== undefined && ctx.scheme.hasChainReader?.(ctx.v2Requirement.network) !== false
  );
}

/**
 * Whether a refusal's reason says the facilitator refused before sending anything: a payment it
 * found wrong (funds, signature, recipient, window, amount, network, scheme). A generic failure
 * (`unexpected_settle_error`, `…_transaction_failed`, an unknown reason) and "already used" say
 * nothing about a transaction it may have sent.
 */
export function refusedBeforeSending(reason: string | undefined): boolean {
  const code = codeForReason(reason, 'payment_settlement_failed');
  return code !== 'payment_settlement_failed' && code !== 'payment_already_used';
}

const HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * Asks the chain about a payment the facilitator refused to settle (docs/ledger.md "A refusal
 * is judged by the chain"). `transaction` is a hash already known for the payment (an earlier
 * attempt's); the refusal's own hash, when it names one, is asked about first.
 */
export async function judgeRefusal(
  rt: GateRuntime,
  ctx: PaymentContext,
  refusal: SettleResponse,
  transaction?: string,
): Promise<RefusalVerdict> {
  const reason = refusal.errorMessage
    ? `${refusal.errorReason ?? 'settlement_failed'}: ${refusal.errorMessage}`
    : (refusal.errorReason ?? 'settlement_failed');
  const named = refusal.transaction && HASH.test(refusal.transaction) ? refusal.transaction : undefined;
  const answer = await askChain(chainQuestion(ctx, named ?? transaction), rt.now());
  if (showsTransfer(answer)) return { kind: 'transferred', receipt: answer.receipt };
  switch (answer.status) {
    case 'unknown':
      return {
        kind: 'unknown',
        message: `the facilitator refused the settlement (${reason}) and the chain cannot tell yet: ${answer.message}`,
      };
    case 'expired':
      return { kind: 'refused', chain: 'expired' };
    default:
      // Unused on chain. A refusal naming its transaction was asked about by that hash (a pending
      // one answers `unknown`); one that names none may have broadcast one that lands later.
      if (named || refusedBeforeSending(refusal.errorReason)) return { kind: 'refused', chain: 'unsettled' };
      return {
        kind: 'unknown',
        message: `the facilitator refused the settlement (${reason}) without naming a transaction; the chain shows no transfer yet, and one it broadcast may still land`,
      };
  }
}
