import type { RequestView } from '../http/types';
import * as lifecycle from '../ledger/lifecycle';
import type { LedgerEntry, LedgerResolution, ReplacedBinding } from '../ledger/types';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '../protocol/schemas';
import type { CompiledRoute, RouteMatch } from '../routes/types';
import type { SchemeServer } from '../scheme';
import { type GateRuntime, safeHook } from './runtime';
import type { PaymentRequest, TransferEvent } from './types';

/** Look again: the entry changed under this request. */
export const RETRY = Symbol('retry');
export type Retry = typeof RETRY;

/** A payment the gate works on, from its claim to its final answer. */
export interface PaymentContext {
  match: RouteMatch;
  route: CompiledRoute;
  scheme: SchemeServer;
  /** The payload in v2 form and the server's v2 requirement (for pre-verify and reconcile). */
  v2Payload: PaymentPayload;
  v2Requirement: PaymentRequirements;
  /** What the facilitator gets (v1 forms for a v1 route). */
  wirePayload: PaymentRequest['payload'];
  wireRequirement: PaymentRequest['requirements'];
  receiptHeader: 'payment-response' | 'x-payment-response';
  requestId: string;
  /** The request that carries the payment: the lifecycle hooks' events carry it. */
  request: RequestView;
  entry: Pick<LedgerEntry, 'id' | 'owner'>;
  validBefore: number;
  /** The payer the scheme verified (sign-in access is granted to it). */
  payer?: string;
  /** Whether the scheme checked the payload's signature locally. */
  authenticated: boolean;
  /** Ends this process's flight of the payment and stops renewing its lease. */
  endFlight: () => void;
  /** The balance key this payment holds a reservation on (`reserveBalance` routes), until given back. */
  reservation?: string | undefined;
}

/** A payment read from a request, not in flight yet. */
export type PaymentClaim = Omit<PaymentContext, 'endFlight' | 'reservation'>;

/** A payment identifier and the request it came with (`payment-identifier` extension). */
export interface IdentifiedRequest {
  /** The binding's key: `<payer, lower-cased>:<identifier>`. */
  key: string;
  fingerprint: string;
  /** The binding, read before, of an uncharged payment: the identifier may be taken from it. */
  replaces?: ReplacedBinding;
}

/** Starts this process's flight of a payment; its `endFlight` also lets the lease go. */
export function startFlight(rt: GateRuntime, base: PaymentClaim): PaymentContext {
  return { ...base, endFlight: lifecycle.startFlight(rt.ledger, base.entry) };
}

/** Moves the entry by a lifecycle verb; logs (and answers false) when that failed. */
export async function recordQuietly<A extends unknown[]>(
  rt: GateRuntime,
  ctx: PaymentContext,
  verb: lifecycle.Verb<A>,
  ...args: A
): Promise<boolean> {
  try {
    const updated = await verb(rt.ledger, ctx.entry, ...args);
    if (!updated)
      rt.logger?.error({ requestId: ctx.requestId, state: verb.to }, 'ledger entry changed under us');
    return updated !== undefined;
  } catch (error) {
    rt.logger?.error({ err: error, requestId: ctx.requestId, state: verb.to }, 'ledger update failed');
    return false;
  }
}

/**
 * Gives back a payment that spent nothing (and its balance reservation), and ends the flight: a
 * claim by default, or what `verb` releases (`releaseUnsent`: a settlement that never left).
 */
export async function releaseQuietly(
  rt: GateRuntime,
  ctx: PaymentContext,
  verb: typeof lifecycle.release = lifecycle.release,
): Promise<void> {
  try {
    await verb(rt.ledger, ctx.entry);
  } catch (error) {
    rt.logger?.warn({ err: error, requestId: ctx.requestId }, 'ledger release failed');
  } finally {
    ctx.endFlight();
  }
  await releaseReservation(rt, ctx);
}

/** Gives back a payment's reservation, if it holds one: its transfer landed or never will. */
export async function releaseReservation(rt: GateRuntime, ctx: PaymentContext): Promise<void> {
  const key = ctx.reservation;
  if (key === undefined) return;
  ctx.reservation = undefined;
  try {
    await rt.ledger.store.releaseReservation?.(key, ctx.entry.id);
  } catch (error) {
    // Kept until it expires: the payer is refused a little longer, never charged twice.
    rt.logger?.warn({ err: error, requestId: ctx.requestId, id: ctx.entry.id }, 'reservation release failed');
  }
}

/** How a retry resolved an entry its own request could not. */
export function resolutionOf(
  rt: GateRuntime,
  found: LedgerEntry,
  action: LedgerResolution['action'],
  note?: string,
): LedgerResolution {
  return {
    by: 'retry',
    instance: rt.ledger.instanceId,
    at: rt.now(),
    from: found.resolution?.from ?? found.state,
    action,
    attempts: found.resolution?.attempts ?? 0,
    ...(note ? { note } : {}),
  };
}

/** Reports a resolution a retry made (`onResolved`, and the log). */
export function reportResolved(
  rt: GateRuntime,
  ctx: PaymentContext,
  found: LedgerEntry,
  resolution: LedgerResolution,
): void {
  safeHook(rt, () =>
    rt.hooks.onResolved?.(
      { id: found.id, route: found.route, network: found.network, payer: found.payer },
      resolution,
    ),
  );
  // A money event: an operator sees every resolution (docs/ledger.md#the-reconciler).
  rt.logger?.warn(
    {
      requestId: ctx.requestId,
      id: found.id,
      action: resolution.action,
      from: resolution.from,
      ...(resolution.note ? { note: resolution.note } : {}),
    },
    'a retry resolved an uncertain payment',
  );
}

/** Reports a transfer the ledger recorded (`onTransfer`). */
export function reportTransfer(
  rt: GateRuntime,
  ctx: PaymentContext,
  receipt: SettleResponse,
  via: TransferEvent['via'],
): void {
  safeHook(rt, () =>
    rt.hooks.onTransfer?.({
      id: ctx.entry.id,
      route: ctx.route.key,
      network: ctx.v2Requirement.network,
      payer: receipt.payer,
      transaction: receipt.transaction,
      via,
      request: ctx.request,
    }),
  );
}

/** What the chain is asked about a payment (`askChain`). */
export function chainQuestion(ctx: PaymentContext, transaction?: string) {
  return {
    scheme: ctx.scheme,
    payload: ctx.v2Payload,
    requirements: ctx.v2Requirement,
    validBefore: ctx.validBefore,
    ...(transaction ? { transaction } : {}),
  };
}
