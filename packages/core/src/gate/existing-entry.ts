import { isErrorCode } from '../errors/codes';
import type { LedgerEntry } from '../ledger/types';
import type { SettleResponse } from '../protocol/schemas';
import { type PaymentContext, RETRY, type Retry, reportResolved, resolutionOf } from './payment-context';
import { proceed } from './proceed';
import { reconcile } from './reconcile-step';
import { errorResponse, respond } from './responses';
import { type GateRuntime, reject, safeHook } from './runtime';
import type { Outcome, PaidRequest } from './types';

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
  return rt.ledger.isInFlight(entry) || (entry.state === 'settled' && !entry.response);
}

/** Answers a payment whose identity is already in the ledger. */
export async function fromExisting(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaidRequest,
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
    const adopted = await ledger.adoptAbandoned(entry, resolution);
    if (adopted && entry.state === 'settling') reportResolved(rt, ctx, entry, resolution);
    return RETRY;
  }

  if (entry.resource !== match.resourceUrl) {
    return reject(rt, match, requestId, 'payment_already_used', 'this payment was made for another resource');
  }
  // A payload the scheme could not authenticate locally could be forged from the public payer
  // and nonce of a settled payment: it gets nothing from the ledger unless it is the stored one.
  if (!ctx.authenticated && canonicalJson(entry.payload) !== canonicalJson(ctx.wirePayload)) {
    return reject(rt, match, requestId, 'payment_already_used', 'this payment identity is already in use');
  }
  switch (entry.state) {
    case 'settled': {
      // The window bounds replays of a stored answer; a payment charged before its handler ran
      // (its answer not produced yet) is served whenever its payer comes back.
      if (entry.response && now() >= ledger.replayUntil(entry)) {
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
      const owned = await ledger.takeOver(entry, ctx.entry.owner);
      if (!owned) return RETRY;
      ledger.leases.hold(ctx.entry, 'settled');
      paid.settlement = entry.receipt as SettleResponse;
      return proceed(rt, ctx, paid);
    }
    case 'rejected': {
      const code =
        entry.error && isErrorCode(entry.error.code) ? entry.error.code : 'payment_settlement_failed';
      return reject(rt, match, requestId, code, entry.error?.message ?? 'the payment was rejected');
    }
    case 'uncertain':
      return reconcile(rt, ctx, paid, entry);
    default:
      return RETRY;
  }
}
