// Gate step 5 of 8, for an uncertain payment (from existing-entry): a retry settles it by the chain's word (before proceed or the stored answer).

import { toPaidResponse } from '../http/paid-response';
import {
  holdForHandler,
  leaveUncertain,
  recordConfirmed,
  recordExpired,
  takeOverUncertain,
} from '../ledger/lifecycle';
import type { LedgerEntry } from '../ledger/types';
import { askChain } from '../reconciler/ask-chain';
import { showsTransfer } from '../scheme';
import { grantAccessFor, grantDeps } from './grant-access';
import {
  chainQuestion,
  type PaymentContext,
  RETRY,
  type Retry,
  recordQuietly,
  reportResolved,
  reportTransfer,
  resolutionOf,
} from './payment-context';
import { proceed } from './proceed';
import { errorResponse, respond } from './responses';
import { type GateRuntime, reject } from './runtime';
import { settleNow } from './settle-step';
import type { Outcome, PaymentRequest } from './types';

/** A retry of an uncertain payment: the chain decides, and a payment it shows unsettled is settled again. */
export async function reconcile(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaymentRequest,
  entry: LedgerEntry,
): Promise<Outcome | Retry> {
  const now = rt.now;
  // A retry takes precedence over the background reconciler (whatever the lease says).
  const owned = await takeOverUncertain(rt.ledger, entry, ctx.entry.owner);
  if (!owned) return RETRY;
  let answer = await askChain(chainQuestion(ctx, entry.transaction), now());
  if (
    answer.status === 'unknown' &&
    (!ctx.scheme.reconcile || ctx.scheme.hasChainReader?.(ctx.v2Requirement.network) === false) &&
    now() < ctx.validBefore * 1000
  ) {
    // No chain reader to ask: the facilitator is asked again. Settling an authorization again can
    // never transfer twice (its nonce is used once on chain); a transfer that landed meanwhile
    // makes the facilitator refuse, and the payment then stays uncertain.
    answer = { status: 'unsettled' };
  }

  if (showsTransfer(answer)) {
    const receipt = answer.receipt;
    const resolution = resolutionOf(rt, entry, 'confirmed-on-chain', `transfer ${receipt.transaction}`);
    const final = entry.response ? toPaidResponse(entry.response, ctx.receiptHeader, receipt) : undefined;
    const settled = await recordConfirmed(rt.ledger, ctx.entry, { receipt, response: final, resolution });
    if (!settled) return RETRY;
    await grantAccessFor(grantDeps(rt), {
      id: entry.id,
      route: entry.route,
      network: entry.network,
      payer: entry.payer,
      transaction: receipt.transaction || undefined,
    });
    reportTransfer(rt, ctx, receipt, 'retry');
    reportResolved(rt, ctx, entry, resolution);
    if (!final) {
      // Settled before its handler ran: the handler produces the paid answer now.
      holdForHandler(rt.ledger, ctx.entry);
      paid.settlement = receipt;
      return proceed(rt, ctx, paid);
    }
    return { kind: 'replay', response: final, entry: settled };
  }
  switch (answer.status) {
    case 'expired': {
      const resolution = resolutionOf(rt, entry, 'expired-unused', 'the authorization expired unused');
      const rejected = await recordQuietly(rt, ctx, recordExpired, resolution);
      if (rejected) reportResolved(rt, ctx, entry, resolution);
      return reject(rt, ctx.match, ctx.requestId, 'payment_expired', 'the authorization expired unused');
    }
    case 'unsettled': {
      const settled = await settleNow(rt, ctx, entry.response, { resolve: entry });
      if (settled.kind === 'failed') return respond(settled.response);
      if (settled.response) {
        const stored = await rt.ledger.get(entry.id);
        return { kind: 'replay', response: settled.response, entry: stored ?? entry };
      }
      holdForHandler(rt.ledger, ctx.entry);
      paid.settlement = settled.receipt;
      return proceed(rt, ctx, paid);
    }
    default: {
      // The chain cannot tell yet: still uncertain, free for the next retry or the reconciler.
      await recordQuietly(rt, ctx, leaveUncertain, resolutionOf(rt, entry, 'unresolved', answer.message));
      return respond(errorResponse('settlement_uncertain', ctx.requestId, answer.message));
    }
  }
}
