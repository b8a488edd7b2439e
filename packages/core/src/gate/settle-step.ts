import { toPaidResponse } from '../ledger/settlement-ledger';
import type { LedgerEntry, StoredResponse } from '../ledger/types';
import { encodeHeader } from '../protocol/codec';
import type { SettleResponse } from '../protocol/schemas';
import { askChain } from './ask-chain';
import { codeForReason } from './match-requirements';
import {
  chainQuestion,
  type PaymentContext,
  recordQuietly,
  reportResolved,
  reportTransfer,
  resolutionOf,
} from './payment-context';
import { challengeResponse, errorResponse } from './responses';
import { type GateRuntime, safeHook } from './runtime';
import type { GateResponse } from './types';

export type SettleResult =
  | { kind: 'settled'; receipt: SettleResponse; response?: StoredResponse }
  | { kind: 'failed'; response: GateResponse };

/**
 * Settles with the facilitator from a `settling` entry and records the result. `handler` is the
 * handler's response when it ran already (after-handler, or a re-settle); it is stored before
 * the facilitator is called so a crash loses nothing. `resolve` marks a re-settle of an
 * uncertain payment (its resolution is recorded with the outcome).
 */
export async function settleNow(
  rt: GateRuntime,
  ctx: PaymentContext,
  handler: StoredResponse | undefined,
  from: readonly LedgerEntry['state'][],
  resolve?: LedgerEntry,
): Promise<SettleResult> {
  const { requestId } = ctx;
  const settling = await rt.ledger.transition(ctx.entry, from, {
    state: 'settling',
    ...(handler ? { response: handler } : {}),
  });
  if (!settling) return { kind: 'failed', response: errorResponse('payment_in_progress', requestId) };
  // Renewed while the facilitator works on it: only a dead process's settlement is taken over.
  rt.ledger.leases.hold(ctx.entry, 'settling');

  let receipt: SettleResponse;
  try {
    receipt = await rt.facilitator.settle(ctx.wirePayload, ctx.wireRequirement);
  } catch (error) {
    rt.logger?.warn({ err: error, requestId }, 'facilitator settle outcome unknown');
    return uncertain(rt, ctx, error instanceof Error ? error.message : 'settlement outcome unknown');
  }
  if (!receipt.success && receipt.errorReason !== 'settlement_pending' && resolve) {
    // The earlier attempt's transfer may have landed since reconcile looked (the facilitator then
    // answers e.g. "nonce already used"): ask the chain once more before calling it a failure.
    const onChain = await askChain(chainQuestion(ctx), rt.now());
    if (onChain.status === 'unknown')
      return uncertain(rt, ctx, receipt.errorMessage ?? 'settlement outcome unknown');
    if (onChain.status === 'settled') receipt = onChain.receipt;
  }
  if (!receipt.success) {
    if (receipt.errorReason === 'settlement_pending') {
      return uncertain(
        rt,
        ctx,
        receipt.errorMessage ?? 'settlement pending',
        receipt.transaction || undefined,
      );
    }
    const reason = receipt.errorReason ?? 'settlement_failed';
    const code = codeForReason(reason, 'payment_settlement_failed');
    const response = challengeResponse(ctx.match, requestId, code, {
      [ctx.receiptHeader]: encodeHeader(receipt),
    });
    await recordQuietly(rt, ctx, ['settling'], {
      state: 'rejected',
      receipt,
      response,
      error: { code, message: receipt.errorMessage ?? reason },
    });
    safeHook(rt, () => rt.hooks.onRejected?.(requestId, code, reason));
    return { kind: 'failed', response };
  }
  // The chain, not the facilitator's word, says the payment was settled (when the scheme reads it).
  const confirmed = await confirmOnChain(rt, ctx, receipt);
  if (typeof confirmed === 'string') return uncertain(rt, ctx, confirmed, receipt.transaction || undefined);
  receipt = confirmed;
  const final = handler ? toPaidResponse(handler, ctx.receiptHeader, receipt) : undefined;
  const resolution = resolve
    ? resolutionOf(rt, resolve, 'settled-again', `transfer ${receipt.transaction}`)
    : undefined;
  const recorded = await recordQuietly(rt, ctx, ['settling'], {
    state: 'settled',
    receipt,
    ...(receipt.transaction ? { transaction: receipt.transaction } : {}),
    ...(final ? { response: final } : {}),
    ...(resolution ? { resolution } : {}),
  });
  if (recorded) reportTransfer(rt, ctx, receipt, resolve ? 'retry' : 'request');
  if (resolve && resolution) reportResolved(rt, ctx, resolve, resolution);
  return final ? { kind: 'settled', receipt, response: final } : { kind: 'settled', receipt };
}

/**
 * The facilitator's successful receipt once the chain shows its transfer (with the hash of the
 * transaction that used the authorization), or why the payment stays uncertain. A scheme
 * without a chain reader cannot confirm: its facilitator's word stands.
 */
async function confirmOnChain(
  rt: GateRuntime,
  ctx: PaymentContext,
  receipt: SettleResponse,
): Promise<SettleResponse | string> {
  if (!ctx.scheme.confirmSettlement) return receipt;
  try {
    const answer = await ctx.scheme.confirmSettlement({
      payload: ctx.v2Payload,
      requirements: ctx.v2Requirement,
      transaction: receipt.transaction,
      now: Math.floor(rt.now() / 1000),
    });
    if (answer.status === 'settled') return { ...receipt, transaction: answer.receipt.transaction };
    return answer.status === 'unknown'
      ? `the facilitator reported settlement in ${receipt.transaction}, not yet confirmed on chain: ${answer.message}`
      : `the facilitator reported settlement in ${receipt.transaction}, which the chain does not show`;
  } catch (error) {
    rt.logger?.warn({ err: error, requestId: ctx.requestId }, 'confirming a settlement on chain failed');
    return `the facilitator reported settlement in ${receipt.transaction}, which could not be confirmed on chain`;
  }
}

/** Records a settlement whose outcome is not known, free at once for retries and the reconciler. */
async function uncertain(
  rt: GateRuntime,
  ctx: PaymentContext,
  message: string,
  transaction?: string,
): Promise<SettleResult> {
  // Free at once for the reconciler and for retries: nobody is settling it any more.
  await rt.ledger.leases.letGo(ctx.entry);
  await recordQuietly(rt, ctx, ['settling'], {
    state: 'uncertain',
    error: { code: 'settlement_uncertain', message },
    leaseUntil: 0,
    ...(transaction ? { transaction } : {}),
  });
  return { kind: 'failed', response: errorResponse('settlement_uncertain', ctx.requestId) };
}
