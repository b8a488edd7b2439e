// After gate step 8 of 8 (settle-step): the sign-in access a settled payment bought is granted.
import type { AccessStore } from '../ledger/access-types';
import type { RouteTable } from '../routes/types';
import type { PaymentIdentity, SchemeServer } from '../scheme';
import type { GateLogger } from './options';

/** A settled payment, as the gate verified it: never a field the client wrote. */
export interface SettledPayment {
  id: PaymentIdentity;
  /** The matched route's key (method and path as declared). */
  route: string;
  network: string;
  /** The payer the gate verified (the scheme's pre-verification, stored in the ledger entry). */
  payer: string | undefined;
  transaction: string | undefined;
}

export interface GrantDeps {
  table: RouteTable;
  store: Partial<AccessStore>;
  schemes: readonly SchemeServer[];
  now: () => number;
  retentionMs: number;
  logger: GateLogger | undefined;
}

/**
 * Records the access a settled payment bought when its route offers sign-in
 * (docs/sign-in-with-x.md): the route the gate matched, the verified payer in its network's one
 * spelling, the route's price on that network, the transaction and the route's policy. Once per
 * payment whoever calls it (the paying request, a retry, the reconciler). A failure is logged:
 * the payment is served either way, and the payer can still pay for a later request.
 */
export async function grantAccessFor(deps: GrantDeps, paid: SettledPayment): Promise<void> {
  const route = deps.table.get(paid.route);
  const signIn = route?.signIn;
  if (!route || !signIn || paid.payer === undefined || !deps.store.grantAccess) return;
  const requirement = route.requirements.find((r) => r.network === paid.network);
  const chain = signIn.chains.get(paid.network);
  if (!requirement || !chain) return;
  const payer = chain.signIn.canonicalAddress(paid.payer, paid.network);
  if (payer === undefined) return;
  const grantedAt = deps.now();
  const { passSeconds, uses } = signIn.policy;
  const validUntil = passSeconds === undefined ? undefined : grantedAt + passSeconds * 1000;
  try {
    await deps.store.grantAccess({
      payment: paid.id,
      route: route.key,
      network: paid.network,
      payer,
      amount: requirement.amount,
      asset: requirement.asset,
      ...(paid.transaction ? { transaction: paid.transaction } : {}),
      grantedAt,
      ...(validUntil === undefined ? {} : { validUntil, expiresAt: validUntil + deps.retentionMs }),
      ...(uses === undefined ? {} : { uses }),
      used: 0,
    });
  } catch (error) {
    deps.logger?.error({ err: error, id: paid.id, route: route.key }, 'sign-in access could not be granted');
  }
}

/** What granting needs, from a gate's runtime. */
export function grantDeps(rt: {
  table: RouteTable;
  store: Partial<AccessStore>;
  schemes: readonly SchemeServer[];
  now: () => number;
  settings: { retentionMs: number };
  logger: GateLogger | undefined;
}): GrantDeps {
  return {
    table: rt.table,
    store: rt.store,
    schemes: rt.schemes,
    now: rt.now,
    retentionMs: rt.settings.retentionMs,
    logger: rt.logger,
  };
}
