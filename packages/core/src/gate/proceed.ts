// Gate step 7 of 8: proceed — the handler runs, then the outcome's settle or release ends the payment (after reserve-balance, before settle-step).
import { toPaidResponse } from '../http/paid-response';
import type { GateResponse, HandlerResponse } from '../http/types';
import { leaveUnanswered, recordAnswer, release } from '../ledger/lifecycle';
import { LEDGER_ERROR_STATUS } from '../ledger/types';
import { encodeHeader } from '../protocol/codec';
import type { SettleResponse } from '../protocol/schemas';
import { type PaymentContext, recordQuietly, releaseQuietly, releaseReservation } from './payment-context';
import { codeOfBody, errorResponse, handlerAnswer } from './responses';
import { type GateRuntime, safeHook } from './runtime';
import { settleNow } from './settle-step';
import type { Outcome, PaymentRequest } from './types';

/** The `proceed` outcome of a claimed payment: the handler runs, then `settle` or `release`, once. */
export type ProceedOutcome = Extract<Outcome, { kind: 'proceed' }>;

/**
 * Lets the handler run for a payment this request holds. The outcome carries the payment's own
 * `settle(response)` and `release()`; the first call of either ends the payment, a later one only
 * passes the handler's answer through.
 */
export function proceed(rt: GateRuntime, ctx: PaymentContext, payment: PaymentRequest): ProceedOutcome {
  let open = true;
  const take = () => {
    const was = open;
    open = false;
    return was;
  };
  return {
    kind: 'proceed',
    payment,
    settle: async (response) =>
      take() ? settleAfterHandler(rt, ctx, payment, response) : handlerAnswer(response),
    release: async () => {
      if (take()) await releaseAfterThrow(rt, ctx, payment);
    },
  };
}

/** Settles (unless the handler failed) and returns exactly what to send. Never throws. */
async function settleAfterHandler(
  rt: GateRuntime,
  ctx: PaymentContext,
  payment: PaymentRequest,
  response: HandlerResponse,
): Promise<GateResponse> {
  try {
    // Inside the try: a handler answer that cannot be read still ends the flight and tells a
    // payer settled before its handler that it was charged.
    const handler = handlerAnswer(response);
    if (payment.settlement) {
      // Settled before the handler ran: only a successful answer is the paid one.
      if (handler.status >= LEDGER_ERROR_STATUS) {
        rt.logger?.warn(
          { requestId: ctx.requestId, id: ctx.entry.id, status: handler.status },
          'handler failed after settlement; a retry of the payload runs it again',
        );
        return failedAfter(rt, ctx, await paidButUnanswered(rt, ctx, payment.settlement));
      }
      const final = toPaidResponse(handler, ctx.receiptHeader, payment.settlement);
      await recordQuietly(rt, ctx, recordAnswer, final);
      safeHook(rt, () => rt.hooks.onSettled?.(payment, payment.settlement!, ctx.request));
      return final;
    }
    if (handler.status >= LEDGER_ERROR_STATUS) {
      await release(rt.ledger, ctx.entry).catch((error: unknown) => {
        rt.logger?.warn({ err: error, requestId: ctx.requestId }, 'ledger release failed');
      });
      await releaseReservation(rt, ctx);
      safeHook(rt, () => rt.hooks.onReleased?.(payment, handler.status, ctx.request));
      return handler;
    }
    const settled = await settleNow(rt, ctx, handler);
    // Settled (the balance shows the transfer) or refused (no transfer): the reservation is given
    // back; an uncertain settlement keeps it until it expires.
    if (settled.kind === 'paid' || settled.response.status === 402) await releaseReservation(rt, ctx);
    if (settled.kind === 'failed') return failedAfter(rt, ctx, settled.response);
    safeHook(rt, () => rt.hooks.onSettled?.(payment, settled.receipt, ctx.request));
    return settled.response ?? handler;
  } catch (error) {
    rt.logger?.error({ err: error, requestId: ctx.requestId }, 'payment finish failed');
    // Settled before the handler: the payer is told so, with the receipt, and the entry is freed
    // for the retry at once; else the settlement's outcome is not known here. Never "nothing
    // was charged".
    if (!payment.settlement)
      return failedAfter(rt, ctx, errorResponse('settlement_uncertain', ctx.requestId));
    return failedAfter(
      rt,
      ctx,
      await paidButUnanswered(rt, ctx, payment.settlement).catch(() =>
        errorResponse('paid_response_unavailable', ctx.requestId, undefined, {
          [ctx.receiptHeader]: encodeHeader(payment.settlement!),
        }),
      ),
    );
  } finally {
    ctx.endFlight();
  }
}

/** The handler threw: release the claim, nothing is charged (or, settled first, free it for the retry). */
async function releaseAfterThrow(
  rt: GateRuntime,
  ctx: PaymentContext,
  payment: PaymentRequest,
): Promise<void> {
  if (payment.settlement) {
    // The handler threw after settlement: the next retry runs it again, at once.
    rt.logger?.warn(
      { requestId: ctx.requestId, id: ctx.entry.id },
      'handler threw after settlement; a retry of the payload runs it again',
    );
    try {
      await paidButUnanswered(rt, ctx, payment.settlement);
    } finally {
      ctx.endFlight();
    }
    return;
  }
  await releaseQuietly(rt, ctx);
  safeHook(rt, () => rt.hooks.onReleased?.(payment, undefined, ctx.request));
}

/**
 * The answer to a payment settled before its handler, whose handler failed: the payer is told
 * the truth (charged, receipt attached, retry the exact payload for the answer) and the entry
 * stays settled without a response, free at once, so the retry runs the handler again.
 */
async function paidButUnanswered(
  rt: GateRuntime,
  ctx: PaymentContext,
  receipt: SettleResponse,
): Promise<GateResponse> {
  await recordQuietly(rt, ctx, leaveUnanswered);
  return errorResponse('paid_response_unavailable', ctx.requestId, undefined, {
    [ctx.receiptHeader]: encodeHeader(receipt),
  });
}

/** Reports a payment that failed after its handler ran (`onFailed`), and returns the answer. */
function failedAfter(rt: GateRuntime, ctx: PaymentContext, response: GateResponse): GateResponse {
  if (rt.hooks.onFailed) {
    const event = {
      requestId: ctx.requestId,
      request: ctx.request,
      route: ctx.route,
      resource: ctx.match.resourceUrl,
    };
    safeHook(rt, () =>
      rt.hooks.onFailed?.({ ...event, status: response.status, code: codeOfBody(response.body) }),
    );
  }
  return response;
}
