import { toPaidResponse } from '../ledger/settlement-ledger';
import type { LedgerEntry } from '../ledger/types';
import { askChain } from './ask-chain';
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
import type { Outcome, PaidRequest } from './types';

/** A retry of an uncertain payment: the chain decides, and a payment it shows unsettled is settled again. */
export async function reconcile(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaidRequest,
  entry: LedgerEntry,
): Promise<Outcome | Retry> {
  const now = rt.now;
  // A retry takes precedence over the background reconciler (whatever the lease says).
  const owned = await rt.ledger.takeOver(entry, ctx.entry.owner);
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

  switch (answer.status) {
    case 'settled': {
      const receipt = answer.receipt;
      const resolution = resolutionOf(rt, entry, 'confirmed-on-chain', `transfer ${receipt.transaction}`);
      const final = entry.response ? toPaidResponse(entry.response, ctx.receiptHeader, receipt) : undefined;
      const settled = await rt.ledger.transition(ctx.entry, ['uncertain'], {
        state: 'settled',
        receipt,
        ...(receipt.transaction ? { transaction: receipt.transaction } : {}),
        ...(final ? { response: final } : {}),
        resolution,
      });
      if (!settled) return RETRY;
      reportTransfer(rt, ctx, receipt, 'retry');
      reportResolved(rt, ctx, entry, resolution);
      if (!final) {
        // Settled before its handler ran: the handler produces the paid answer now.
        rt.ledger.leases.hold(ctx.entry, 'settled');
        paid.settlement = receipt;
        return proceed(rt, ctx, paid);
      }
      return { kind: 'replay', response: final, entry: settled };
    }
    case 'expired': {
      const resolution = resolutionOf(rt, entry, 'expired-unused', 'the authorization expired unused');
      const rejected = await recordQuietly(rt, ctx, ['uncertain'], {
        state: 'rejected',
        error: { code: 'payment_expired', message: 'the authorization expired unused' },
        leaseUntil: 0,
        resolution,
      });
      if (rejected) reportResolved(rt, ctx, entry, resolution);
      return reject(rt, ctx.match, ctx.requestId, 'payment_expired', 'the authorization expired unused');
    }
    case 'unsettled': {
      const settled = await settleNow(rt, ctx, entry.response, ['uncertain'], entry);
      if (settled.kind === 'failed') return respond(settled.response);
      if (settled.response) {
        const stored = await rt.ledger.get(entry.id);
        return { kind: 'replay', response: settled.response, entry: stored ?? entry };
      }
      rt.ledger.leases.hold(ctx.entry, 'settled');
      paid.settlement = settled.receipt;
      return proceed(rt, ctx, paid);
    }
    default: {
      // The chain cannot tell yet: still uncertain, free for the next retry or the reconciler.
      await recordQuietly(rt, ctx, ['uncertain'], {
        state: 'uncertain',
        leaseUntil: 0,
        resolution: resolutionOf(rt, entry, 'unresolved', answer.message),
      });
      return respond(errorResponse('settlement_uncertain', ctx.requestId, answer.message));
    }
  }
}
