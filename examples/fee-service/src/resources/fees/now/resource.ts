import type { CurrentSnapshot, SnapshotService } from '../../../snapshot/service';
import { defineResource, perEnvironment } from '../../kit';
import { feeSchemaConstantsOf } from '../../shared/snapshot-meta';
import { NO_VALIDATED_SNAPSHOT, readSnapshot } from '../../shared/snapshot-reading';
import { buildFeeDecision } from './build';
import { FEE_DECISION_OFFER } from './offer';
import { feeDecisionSchema } from './schema';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * The snapshot to decide on once the payment has settled. The precondition checked that one
 * could be served before the gate ran; if it crossed the 120 s limit during settlement (a window
 * of milliseconds), the payer has paid, so the last validated snapshot is served, marked stale and
 * degraded, rather than charging for an error.
 */
function readingAfterSettlement(snapshots: SnapshotService, requestId: string): CurrentSnapshot | undefined {
  const read = readSnapshot(snapshots, requestId);
  if ('reading' in read) return read.reading;
  const latest = snapshots.latest();
  if (!latest) return undefined;
  const ageMs = Math.max(0, Date.now() - Date.parse(latest.fetched_at));
  return { snapshot: latest, age_seconds: Math.floor(ageMs / 1000), stale: true, evidence: 'degraded' };
}

/**
 * GET /api/v1/fees/now: the paid send-or-wait decision (docs/fee-service-contract.md#feedecision).
 * It settles **before** the handler, so `meta.payment` carries the real settlement transaction and
 * the 200 is only sent once the settlement is confirmed. Canonical URL only (400 otherwise); 503
 * before any challenge when no validated snapshot exists; paused in the production profile.
 */
export const feeDecision = defineResource({
  method: FEE_DECISION_OFFER.method,
  path: FEE_DECISION_OFFER.path,
  description: 'Send-or-wait timing decision (send-wait-v1) from the validated mempool snapshot',
  price: FEE_DECISION_OFFER.price,
  discovery: {
    category: 'fees',
    keywords: ['bitcoin', 'fees', 'timing', 'decision', 'send-wait-v1'],
    operationId: 'getFeeTimingDecision',
  },
  output: perEnvironment((env) => feeDecisionSchema(feeSchemaConstantsOf(env))),
  errors: {
    no_validated_snapshot: NO_VALIDATED_SNAPSHOT,
    payment_not_settled: {
      status: 502,
      retryable: false,
      description: 'The payment has no confirmed settlement; nothing was served.',
    },
  },
  needs: ['snapshots', 'payments'],
  availability: { production: 'paused' },
  gate: { canonical: true, settle: 'before-handler' },
  precondition(requestId, capabilities) {
    const read = readSnapshot(capabilities.snapshots!, requestId);
    return 'error' in read ? read.error : undefined;
  },
  handler({ payment, capabilities, requestId, fail }) {
    const settlement = payment?.settlement;
    // Unreachable with `settle: 'before-handler'` (the gate only proceeds once settled).
    if (!settlement?.success || !TX_HASH.test(settlement.transaction)) return fail('payment_not_settled');
    const reading = readingAfterSettlement(capabilities.snapshots, requestId);
    if (!reading) return fail('no_validated_snapshot');
    return {
      status: 200,
      headers: { 'cache-control': 'no-store' },
      body: buildFeeDecision({
        reading,
        payment: {
          facilitator: capabilities.payments.facilitatorName,
          network: settlement.network,
          transaction_hash: settlement.transaction,
        },
      }),
    };
  },
});
