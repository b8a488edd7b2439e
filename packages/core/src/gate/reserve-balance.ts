// Gate step 6 of 8: reserve-balance — hold the payer's balance on a reserveBalance route (after claim verified the payment, before proceed).
import { reservationKey } from '../ledger/reservation-types';
import { canReserve } from './config';
import type { PaymentContext } from './payment-context';
import { errorResponse, respond } from './responses';
import { type GateRuntime, reject } from './runtime';
import type { Outcome, PaidRequest } from './types';

/** Whether a payment's route reserves the payer's balance and its network has the means to. */
function reserves(rt: GateRuntime, ctx: PaymentContext): boolean {
  if (ctx.route.config.reserveBalance !== true || ctx.route.settle !== 'after-handler') return false;
  return (
    canReserve(ctx.scheme, ctx.v2Requirement.network) && typeof rt.ledger.store.reserveBalance === 'function'
  );
}

/**
 * Holds the payer's balance for a verified payment before its handler runs
 * (docs/ledger.md#one-balance-one-side-effect): the reservation is recorded in the ledger store
 * first, which answers what the payer's reservations recorded before it hold with it; the chain is
 * asked for the balance after. A payment whose reservations do not fit is refused with 402
 * `payment_balance_reserved`, its reservation given back by the caller's release. Reading the
 * balance after recording counts every payment whose transfer the balance does not show yet (a
 * reservation is given back only once its transfer landed or never will), so one balance never
 * pays for two handlers; a transfer that landed between the two reads is counted twice, which
 * refuses, never admits.
 * @returns `undefined` to run the handler, else the answer (the caller releases the claim).
 */
export async function reserveBalance(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaidRequest,
): Promise<Outcome | undefined> {
  if (!reserves(rt, ctx)) return undefined;
  const { requestId, match } = ctx;
  const { network, asset, amount } = ctx.v2Requirement;
  const key = reservationKey(network, asset, paid.payer);
  let held: bigint;
  try {
    const reserved = await rt.ledger.store.reserveBalance!(
      { key, entry: ctx.entry.id, amount, expiresAt: ctx.validBefore * 1000 + rt.ledger.leaseMs },
      rt.now(),
    );
    ctx.reservation = key;
    held = BigInt(reserved.held);
  } catch (error) {
    rt.logger?.error({ err: error, requestId, id: ctx.entry.id }, 'balance reservation failed');
    return respond(errorResponse('ledger_unavailable', requestId));
  }
  let balance: bigint;
  try {
    balance = await ctx.scheme.balanceOf!({ network, asset, owner: paid.payer });
  } catch (error) {
    rt.logger?.warn({ err: error, requestId, id: ctx.entry.id }, "the payer's balance could not be read");
    return respond(errorResponse('chain_unavailable', requestId));
  }
  if (held <= balance) return undefined;
  // A money event: an operator sees every reservation refusal (docs/production.md).
  rt.logger?.warn(
    { requestId, id: ctx.entry.id, payer: paid.payer, held: held.toString(), balance: balance.toString() },
    "payment refused before its handler: the payer's balance is held for its other payments",
  );
  return reject(
    rt,
    match,
    requestId,
    'payment_balance_reserved',
    `the payer's unsettled payments would hold ${held} of a balance of ${balance}`,
  );
}
