import { buildFeeDecision } from '../domain/builders';
import { errorResult } from '../http/respond';
import type { RouteContext, RouteResult } from '../http/types';
import type { CurrentSnapshot } from '../snapshot/service';
import { readSnapshot } from './snapshot-reading';
import { acceptsOf, type PaidResource, type ResourceDeps } from './types';

/** 0.001 USDC in atomic units (seed 4.2). */
export const FEE_DECISION_AMOUNT = '1000';
/** Payment max timeout of the decision (seed section 8). */
export const FEE_DECISION_MAX_TIMEOUT_SECONDS = 60;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * The snapshot to decide on once the payment has settled. The precondition checked that one
 * could be served before the gate ran; if it crossed the 120 s limit during settlement (a window
 * of milliseconds), the payer has paid, so the last validated snapshot is served, marked stale and
 * degraded, rather than charging for an error.
 */
function readingAfterSettlement(deps: ResourceDeps, requestId: string): CurrentSnapshot | undefined {
  const read = readSnapshot(deps.snapshots, requestId);
  if ('reading' in read) return read.reading;
  const latest = deps.snapshots.latest();
  if (!latest) return undefined;
  const ageMs = Math.max(0, Date.now() - Date.parse(latest.fetched_at));
  return { snapshot: latest, age_seconds: Math.floor(ageMs / 1000), stale: true, evidence: 'degraded' };
}

/**
 * GET /api/v1/fees/now (seed 4.2): the paid send-or-wait decision. It settles **before** the
 * handler, so `meta.payment` carries the real settlement transaction and the 200 is only sent once
 * the settlement is confirmed. Canonical URL only (400 otherwise); 503 before any challenge when
 * no validated snapshot exists.
 */
export const feeDecision: PaidResource = {
  method: 'GET',
  path: '/api/v1/fees/now',
  route: (deps) => ({
    accepts: acceptsOf(deps.terms, FEE_DECISION_AMOUNT, FEE_DECISION_MAX_TIMEOUT_SECONDS),
    description: 'Send-or-wait timing decision (send-wait-v1) from the validated mempool snapshot',
    mimeType: 'application/json',
    canonical: true,
    settle: 'before-handler',
    discovery: {
      category: 'fees',
      keywords: ['bitcoin', 'fees', 'timing', 'decision', 'send-wait-v1'],
      operationId: 'getFeeTimingDecision',
      output: deps.schemas.FeeDecision,
    },
  }),
  precondition(requestId, deps) {
    const read = readSnapshot(deps.snapshots, requestId);
    return 'error' in read ? read.error : undefined;
  },
  handler(context: RouteContext, deps: ResourceDeps): RouteResult {
    const settlement = context.payment?.settlement;
    if (!settlement?.success || !TX_HASH.test(settlement.transaction)) {
      // Unreachable with `settle: 'before-handler'` (the gate only proceeds once settled).
      return errorResult({
        status: 502,
        code: 'payment_not_settled',
        requestId: context.requestId,
        retryable: false,
      });
    }
    const reading = readingAfterSettlement(deps, context.requestId);
    if (!reading) {
      return errorResult({
        status: 503,
        code: 'no_validated_snapshot',
        requestId: context.requestId,
        retryable: true,
      });
    }
    return {
      status: 200,
      headers: { 'cache-control': 'no-store' },
      body: buildFeeDecision({
        reading,
        payment: {
          facilitator: deps.facilitatorName,
          network: settlement.network,
          transaction_hash: settlement.transaction,
        },
      }),
    };
  },
};
