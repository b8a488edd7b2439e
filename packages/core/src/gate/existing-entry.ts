// Gate step 5 of 8: existing-entry — a payment already in the ledger: replay, in flight, or uncertain (after claim found it; reconcile-step or proceed next).
import { isErrorCode } from '../errors/codes';
import {
  adoptAbandoned,
  isAnswered,
  isRejected,
  isSettled,
  isSettling,
  isUncertain,
  takeOverUnanswered,
} from '../ledger/lifecycle';
import type { LedgerEntry } from '../ledger/types';
import type { SettleResponse } from '../protocol/schemas';
import { type PaymentContext, RETRY, type Retry, reportResolved, resolutionOf } from './payment-context';
import { proceed } from './proceed';
import { reconcile } from './reconcile-step';
import { errorResponse, respond } from './responses';
import { type GateRuntime, reject, safeHook } from './runtime';
import type { Outcome, PaymentRequest } from './types';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** JSON with object keys sorted (stores such as Postgres jsonb do not keep key order). */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/**
 * Whether another request is working on the entry now: in flight, or settled with its handler
 * running (a route that settles first). Only while its owner keeps the lease.
 */
function heldElsewhere(rt: GateRuntime, entry: LedgerEntry, ctx: PaymentContext): boolean {
  if (rt.ledger.leaseEnded(entry) || entry.owner === ctx.entry.owner) return false;
  return rt.ledger.isInFlight(entry) || (isSettled(entry) && !entry.response);
}

/** A refusal of a payment that may have been charged: an operator sees each one, with the entry. */
function chargedRefusal(rt: GateRuntime, ctx: PaymentContext, entry: LedgerEntry, why: string): void {
  rt.logger?.warn(
    { requestId: ctx.requestId, id: entry.id, state: entry.state, resource: ctx.match.resourceUrl, why },
    'a retry of a charged payment was refused (payment_already_used)',
  );
}

/**
 * Whether the gate refuses this entry's stored answer to a payload sent again: with strict replay
 * (`replay: 'strict'`), once the payment was settled and its own request sent the answer. An
 * answer resolved later (`resolution`: its request could not deliver it) is still served.
 */
export function refusesReplay(rt: Pick<GateRuntime, 'replay'>, entry: LedgerEntry): boolean {
  return rt.replay === 'strict' && isAnswered(entry) && !entry.resolution;
}

/**
 * The refusal of a payload sent again after its answer, with strict replay: by design, so logged at
 * info (with the entry, for an operator asked about a lost answer), not as a charged refusal.
 */
export function answeredOnce(
  rt: GateRuntime,
  match: PaymentContext['match'],
  requestId: string,
  entry: LedgerEntry,
): Outcome {
  rt.logger?.info?.(
    { requestId, id: entry.id, resource: match.resourceUrl },
    'a payment settled and answered was sent again and refused (strict replay)',
  );
  const message = 'this payment was settled and answered; this server answers a payment once';
  return reject(rt, match, requestId, 'payment_already_used', message);
}

/** Answers a payment whose identity is already in the ledger. */
export async function fromExisting(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaymentRequest,
  found: LedgerEntry,
): Promise<Outcome | Retry> {
  const { match, requestId } = ctx;
  const { ledger, now } = rt;
  let entry = found;
  const deadline = now() + rt.settings.inFlightWaitMs;
  while (heldElsewhere(rt, entry, ctx)) {
    if (now() >= deadline) return respond(errorResponse('payment_in_progress', requestId));
    await sleep(rt.settings.pollIntervalMs);
    const next = await ledger.get(entry.id);
    if (!next) return RETRY;
    entry = next;
  }
  if (ledger.isInFlight(entry)) {
    // The owner died (or hung) past its lease: a settlement it started may have landed.
    const resolution = resolutionOf(
      rt,
      entry,
      'abandoned',
      `owner ${entry.owner} stopped renewing its lease`,
    );
    const adopted = await adoptAbandoned(ledger, entry, resolution);
    if (adopted && isSettling(entry)) reportResolved(rt, ctx, entry, resolution);
    return RETRY;
  }

  if (entry.resource !== match.resourceUrl) {
    if (!isRejected(entry)) chargedRefusal(rt, ctx, entry, 'made for another resource');
    return reject(rt, match, requestId, 'payment_already_used', 'this payment was made for another resource');
  }
  // A payload the scheme could not authenticate locally could be forged from the public payer
  // and nonce of a settled payment: it gets nothing from the ledger unless it is the stored one.
  if (!ctx.authenticated && canonicalJson(entry.payload) !== canonicalJson(ctx.wirePayload)) {
    return reject(rt, match, requestId, 'payment_already_used', 'this payment identity is already in use');
  }
  if (isSettled(entry)) {
    if (refusesReplay(rt, entry)) return answeredOnce(rt, match, requestId, entry);
    // The window bounds replays of an answer its own request delivered. One it never delivered
    // (resolved later by the reconciler or a retry: `replayUntil` is then the ledger's retention)
    // and a payment charged before its handler ran (its answer not produced yet) are served
    // whenever the payer comes back with the exact payload.
    if (entry.response && now() >= ledger.replayUntil(entry)) {
      chargedRefusal(rt, ctx, entry, 'replay window ended');
      return reject(
        rt,
        match,
        requestId,
        'payment_already_used',
        'the replay window of this payment has ended',
      );
    }
    if (entry.response) {
      const settled = entry;
      safeHook(rt, () => rt.hooks.onReplay?.(settled, ctx.request));
      return { kind: 'replay', response: entry.response, entry };
    }
    // Settled before the handler ran, and no handler produced the paid answer yet: run it now.
    const owned = await takeOverUnanswered(ledger, entry, ctx.entry.owner);
    if (!owned) return RETRY;
    paid.settlement = entry.receipt as SettleResponse;
    return proceed(rt, ctx, paid);
  }
  if (isRejected(entry)) {
    const code =
      entry.error && isErrorCode(entry.error.code) ? entry.error.code : 'payment_settlement_failed';
    return reject(rt, match, requestId, code, entry.error?.message ?? 'the payment was rejected');
  }
  if (isUncertain(entry)) return reconcile(rt, ctx, paid, entry);
  return RETRY;
}
