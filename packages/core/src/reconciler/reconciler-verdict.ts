import { toPaidResponse } from '../http/paid-response';
import type { LedgerEntry, LedgerPatch, LedgerResolution, LedgerState } from '../ledger/types';
import type { SettleResponse } from '../protocol/schemas';
import type { ReconcileResult } from '../scheme';

/**
 * The receipt header of a payment resolved without its request: `X-PAYMENT-RESPONSE` for a v1
 * payload, else `PAYMENT-RESPONSE` (a retry resolving it itself uses the header it was sent in).
 */
export function receiptHeaderOf(
  entry: Pick<LedgerEntry, 'payload'>,
): 'payment-response' | 'x-payment-response' {
  return (entry.payload as { x402Version?: unknown } | undefined)?.x402Version === 1
    ? 'x-payment-response'
    : 'payment-response';
}

/** Who resolves, and when: the reconciler of one instance at one moment. */
export interface Resolver {
  instance: string;
  at: number;
}

/** How the reconciler resolved an entry (an abandonment is not an attempt at the chain). */
export function reconcilerResolution(
  resolver: Resolver,
  entry: LedgerEntry,
  from: LedgerState,
  action: LedgerResolution['action'],
  note?: string,
): LedgerResolution {
  const attempts = (entry.resolution?.attempts ?? 0) + (action === 'abandoned' ? 0 : 1);
  return {
    by: 'reconciler',
    instance: resolver.instance,
    at: resolver.at,
    from,
    action,
    attempts,
    ...(note ? { note } : {}),
  };
}

/** What the reconciler records for the chain's answer about an uncertain entry. */
export interface Verdict {
  patch: LedgerPatch;
  done: LedgerResolution;
  receipt?: SettleResponse;
}

/**
 * The verdict on an uncertain entry: settled on chain → `settled` with the receipt (and the paid
 * answer when the handler's response was stored); expired unused → `rejected`; anything else stays
 * uncertain until `backoff(attempts)` ms from now.
 */
export function verdictOf(
  resolver: Resolver,
  entry: LedgerEntry,
  from: LedgerState,
  answer: ReconcileResult,
  backoff: (attempts: number) => number,
): Verdict {
  switch (answer.status) {
    case 'settled': {
      const receipt = answer.receipt;
      const done = reconcilerResolution(
        resolver,
        entry,
        from,
        'confirmed-on-chain',
        `transfer ${receipt.transaction}`,
      );
      const patch: LedgerPatch = {
        state: 'settled',
        receipt,
        ...(receipt.transaction ? { transaction: receipt.transaction } : {}),
        ...(entry.response
          ? { response: toPaidResponse(entry.response, receiptHeaderOf(entry), receipt) }
          : {}),
        // Free at once: a route that settles before its handler runs it on the next retry.
        leaseUntil: 0,
        resolution: done,
      };
      return { patch, done, receipt };
    }
    case 'expired': {
      const done = reconcilerResolution(
        resolver,
        entry,
        from,
        'expired-unused',
        'the authorization expired unused',
      );
      const patch: LedgerPatch = {
        state: 'rejected',
        error: { code: 'payment_expired', message: 'the authorization expired unused' },
        leaseUntil: 0,
        resolution: done,
      };
      return { patch, done };
    }
    default: {
      const note =
        answer.status === 'unsettled'
          ? 'no transfer on chain yet; a retry of the exact payload settles it again'
          : answer.message;
      const done = reconcilerResolution(resolver, entry, from, 'unresolved', note);
      return {
        patch: { state: 'uncertain', leaseUntil: resolver.at + backoff(done.attempts), resolution: done },
        done,
      };
    }
  }
}
