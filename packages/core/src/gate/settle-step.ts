// Gate step 8 of 8: settle-step — settle with the facilitator and record the result (after proceed's settle, or at claim on a route that settles first; last).
import { isFacilitatorError } from '../facilitator/facilitator-error';
import { toPaidResponse } from '../http/paid-response';
import type { GateResponse, StoredResponse } from '../http/types';
import {
  recordRejected,
  recordSettled,
  recordUncertain,
  releaseUnsent,
  settleAgain,
  startSettling,
  startSettlingUnverified,
} from '../ledger/lifecycle';
import type { LedgerEntry } from '../ledger/types';
import { encodeHeader } from '../protocol/codec';
import type { SettleResponse } from '../protocol/schemas';
import { showsTransfer } from '../scheme';
import { grantAccessFor, grantDeps } from './grant-access';
import { canAskChain, judgeRefusal, refusedBeforeSending } from './judge-refusal';
import { codeForReason } from './match-requirements';
import {
  type PaymentContext,
  recordQuietly,
  releaseQuietly,
  reportResolved,
  reportTransfer,
  resolutionOf,
} from './payment-context';
import { challengeResponse, errorResponse } from './responses';
import { type GateRuntime, safeHook } from './runtime';

export type SettleResult =
  | { kind: 'paid'; receipt: SettleResponse; response?: StoredResponse }
  | { kind: 'failed'; response: GateResponse };

/** Which settlement `settleNow` makes of the payment it holds. */
export interface SettleHow {
  /** A re-settle of this uncertain entry (the lifecycle's `settleAgain`; its resolution is recorded with the outcome). */
  resolve?: LedgerEntry;
  /** A claim never verified (a route that settles first): `/settle` verifies it. */
  unverified?: boolean;
}

/**
 * Settles a payment with the facilitator and records the result. `handler` is the handler's
 * response when it ran already (after-handler, or a re-settle); it is stored before the
 * facilitator is called so a crash loses nothing. An unverified claim refused for a reason that
 * rules the transfer out is `rejected` at once, and one whose `/settle` never reached the
 * facilitator is released with 503 `facilitator_unavailable` (docs/ledger.md#states).
 */
export async function settleNow(
  rt: GateRuntime,
  ctx: PaymentContext,
  handler: StoredResponse | undefined,
  how: SettleHow = {},
): Promise<SettleResult> {
  const { requestId } = ctx;
  const { resolve, unverified = false } = how;
  // Its lease is renewed while the facilitator works on it: only a dead process's settlement is
  // taken over.
  const start = resolve ? settleAgain : unverified ? startSettlingUnverified : startSettling;
  const settling = await start(rt.ledger, ctx.entry, handler);
  if (!settling) return { kind: 'failed', response: errorResponse('payment_in_progress', requestId) };

  let receipt: SettleResponse;
  try {
    receipt = await rt.facilitator.settle(ctx.wirePayload, ctx.wireRequirement);
  } catch (error) {
    if (unverified && isFacilitatorError(error) && error.unreached) return unsent(rt, ctx, error);
    rt.logger?.warn({ err: error, requestId }, 'facilitator settle outcome unknown');
    return uncertain(rt, ctx, error instanceof Error ? error.message : 'settlement outcome unknown');
  }
  let onChain = false;
  if (unverified && !receipt.success && refusedBeforeSending(receipt.errorReason)) {
    // /settle verified first and found the payment wrong: nothing was sent, as at /verify.
    return refused(rt, ctx, receipt, 'not asked');
  }
  if (!receipt.success && receipt.errorReason !== 'settlement_pending') {
    // The chain judges a refusal whenever it can be asked (docs/ledger.md "A refusal is judged by
    // the chain"): a facilitator may answer "failed" after its transfer landed, or with one still
    // pending. A re-settle without a chain reader stays uncertain: its first attempt may have landed.
    const verdict =
      resolve || canAskChain(ctx)
        ? await judgeRefusal(rt, ctx, receipt, resolve?.transaction)
        : ({ kind: 'refused', chain: 'not asked' } as const);
    if (verdict.kind === 'unknown') {
      rt.logger?.warn(
        { requestId, id: ctx.entry.id, reason: receipt.errorReason, note: verdict.message },
        'facilitator refused a settlement the chain cannot rule out: kept uncertain',
      );
      return uncertain(rt, ctx, verdict.message, receipt.transaction || resolve?.transaction || undefined);
    }
    if (verdict.kind === 'transferred') {
      rt.logger?.warn(
        {
          requestId,
          id: ctx.entry.id,
          reason: receipt.errorReason,
          transaction: verdict.receipt.transaction,
        },
        'facilitator refused a settlement the chain shows: served on the chain receipt',
      );
      receipt = verdict.receipt;
      onChain = true;
    } else return refused(rt, ctx, receipt, verdict.chain);
  }
  if (!receipt.success) {
    return uncertain(rt, ctx, receipt.errorMessage ?? 'settlement pending', receipt.transaction || undefined);
  }
  // The chain, not the facilitator's word, says the payment was settled (when the scheme reads it).
  const confirmed = onChain ? receipt : await confirmOnChain(rt, ctx, receipt);
  if (typeof confirmed === 'string') return uncertain(rt, ctx, confirmed, receipt.transaction || undefined);
  receipt = confirmed;
  const final = handler ? toPaidResponse(handler, ctx.receiptHeader, receipt) : undefined;
  const resolution = resolve
    ? resolutionOf(
        rt,
        resolve,
        onChain ? 'confirmed-on-chain' : 'settled-again',
        `transfer ${receipt.transaction}`,
      )
    : undefined;
  const recorded = await recordQuietly(rt, ctx, recordSettled, { receipt, response: final, resolution });
  if (recorded) {
    // Before the answer is sent: a payer who signs in right after its 200 finds the access.
    await grantAccessFor(grantDeps(rt), {
      id: ctx.entry.id,
      route: ctx.route.key,
      network: ctx.v2Requirement.network,
      payer: ctx.payer ?? receipt.payer,
      transaction: receipt.transaction || undefined,
    });
    reportTransfer(rt, ctx, receipt, resolve ? 'retry' : 'request');
  }
  if (resolve && resolution) reportResolved(rt, ctx, resolve, resolution);
  return final ? { kind: 'paid', receipt, response: final } : { kind: 'paid', receipt };
}

/** An unverified claim whose `/settle` never reached the facilitator: given back, nothing was charged. */
async function unsent(rt: GateRuntime, ctx: PaymentContext, error: Error): Promise<SettleResult> {
  rt.logger?.warn({ err: error, requestId: ctx.requestId }, 'facilitator settle unreachable');
  // A release that fails keeps the entry: its lease runs out and the reconciler finds it unsettled.
  await releaseQuietly(rt, ctx, releaseUnsent);
  return { kind: 'failed', response: errorResponse('facilitator_unavailable', ctx.requestId) };
}

/** Records a refusal that stands (nothing moved on chain, or no chain to ask) and answers 402. */
async function refused(
  rt: GateRuntime,
  ctx: PaymentContext,
  receipt: SettleResponse,
  chain: 'unsettled' | 'expired' | 'not asked',
): Promise<SettleResult> {
  const { requestId } = ctx;
  const reason = receipt.errorReason ?? 'settlement_failed';
  const code = codeForReason(reason, 'payment_settlement_failed');
  const response = challengeResponse(ctx.match, requestId, code, {
    [ctx.receiptHeader]: encodeHeader(receipt),
  });
  // After the handler ran and the facilitator was asked to transfer: an operator looks at each.
  rt.logger?.warn({ requestId, id: ctx.entry.id, reason, code, chain }, 'settlement refused');
  await recordQuietly(rt, ctx, recordRejected, receipt, response, {
    code,
    message: receipt.errorMessage ?? reason,
  });
  safeHook(rt, () => rt.hooks.onRejected?.(requestId, code, reason));
  return { kind: 'failed', response };
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
    if (showsTransfer(answer)) return { ...receipt, transaction: answer.receipt.transaction };
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
  await recordQuietly(rt, ctx, recordUncertain, message, transaction);
  return { kind: 'failed', response: errorResponse('settlement_uncertain', ctx.requestId) };
}
