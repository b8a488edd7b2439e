import type { LedgerEntry, LedgerPatch, LedgerResolution } from '../ledger/types';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '../protocol/schemas';
import type { CompiledRoute, RouteMatch } from '../routes/compile-routes';
import type { PaymentIdentity, SchemeServer } from '../scheme';
import { type GateRuntime, safeHook } from './runtime';
import type { PaidRequest, RequestView, TransferEvent } from './types';

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
  wirePayload: PaidRequest['payload'];
  wireRequirement: PaidRequest['requirements'];
  receiptHeader: 'payment-response' | 'x-payment-response';
  requestId: string;
  /** The request that carries the payment: the lifecycle hooks' events carry it. */
  request: RequestView;
  entry: Pick<LedgerEntry, 'id' | 'owner'>;
  validBefore: number;
  /** Whether the scheme checked the payload's signature locally. */
  authenticated: boolean;
  /** Ends this process's flight of the payment and stops renewing its lease. */
  endFlight: () => void;
}

/** A payment read from a request, not in flight yet. */
export type PaymentClaim = Omit<PaymentContext, 'endFlight'>;

/** A payment identifier and the request it came with (`payment-identifier` extension). */
export interface IdentifiedRequest {
  /** The binding's key: `<payer, lower-cased>:<identifier>`. */
  key: string;
  fingerprint: string;
  /** The uncharged payment the identifier is bound to and may be taken from. */
  replaces?: PaymentIdentity;
}

/** Starts this process's flight of a payment; its `endFlight` also lets the lease go. */
export function startFlight(rt: GateRuntime, base: PaymentClaim): PaymentContext {
  const end = rt.ledger.startFlight(base.entry.id);
  const endFlight = () => {
    end();
    void rt.ledger.leases.letGo(base.entry);
  };
  return { ...base, endFlight };
}

/** Moves the entry to another state; logs (and answers false) when that failed. */
export async function recordQuietly(
  rt: GateRuntime,
  ctx: PaymentContext,
  from: readonly LedgerEntry['state'][],
  patch: LedgerPatch,
): Promise<boolean> {
  try {
    const updated = await rt.ledger.transition(ctx.entry, from, patch);
    if (!updated)
      rt.logger?.error({ requestId: ctx.requestId, state: patch.state }, 'ledger entry changed under us');
    return updated !== undefined;
  } catch (error) {
    rt.logger?.error({ err: error, requestId: ctx.requestId, state: patch.state }, 'ledger update failed');
    return false;
  }
}

/** Gives back a claim that spent nothing, and ends the flight. */
export async function releaseQuietly(rt: GateRuntime, ctx: PaymentContext): Promise<void> {
  try {
    await rt.ledger.release(ctx.entry);
  } catch (error) {
    rt.logger?.warn({ err: error, requestId: ctx.requestId }, 'ledger release failed');
  } finally {
    ctx.endFlight();
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
  rt.logger?.info?.(
    { requestId: ctx.requestId, id: found.id, action: resolution.action, from: resolution.from },
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
