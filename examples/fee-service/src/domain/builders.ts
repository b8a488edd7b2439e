import {
  ALGORITHM_VERSION,
  LIMITATIONS,
  PAID_RESOURCE_METHOD,
  PAID_RESOURCE_PATH,
  PAID_RESOURCE_PRICE,
  PAYMENT_AMOUNT,
  PAYMENT_CURRENCY,
  SCHEMA_VERSION,
} from './constants';
import { deriveFeeFigures } from './derived';
import type { FeeDecision, FeePreview } from './schemas';
import { decideSendWait } from './send-wait';
import type { SnapshotReading } from './types';

/** Settlement facts of the payment that bought a decision, supplied by the payment wiring. */
export interface DecisionPayment {
  /** Name of the facilitator that settled. */
  facilitator: string;
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** `0x` + 64 hex settlement transaction hash. */
  transaction_hash: string;
}

function buildSharedMeta(reading: SnapshotReading) {
  const { snapshot } = reading;
  return {
    snapshot_schema: snapshot.snapshot_schema,
    snapshot_digest: snapshot.snapshot_digest,
    source: snapshot.source,
    fetched_at: snapshot.fetched_at,
    age_seconds: reading.age_seconds,
    stale: reading.stale,
    algorithm_version: ALGORITHM_VERSION,
  } as const;
}

/**
 * Builds the FeePreview body (docs/fee-service-contract.md#feepreview) from the current snapshot reading.
 * @param options.reading what the snapshot service's `current(now)` returned
 * @param options.network CAIP-2 network of the paid decision, e.g. `eip155:8453`
 * @example buildFeePreview({ reading: service.current(Date.now()), network: 'eip155:8453' })
 */
export function buildFeePreview(options: { reading: SnapshotReading; network: string }): FeePreview {
  const { reading, network } = options;
  return {
    data: {
      ...deriveFeeFigures(reading.snapshot),
      paid_resource: {
        method: PAID_RESOURCE_METHOD,
        path: PAID_RESOURCE_PATH,
        price: PAID_RESOURCE_PRICE,
        network,
      },
    },
    meta: buildSharedMeta(reading),
  };
}

/**
 * Builds the FeeDecision body (docs/fee-service-contract.md#feedecision): the figures, the send-wait-v1 decision, the meta with
 * evidence and payment, and the {@link LIMITATIONS}.
 * @example buildFeeDecision({ reading, payment: { facilitator: 'tollbooth', network: 'eip155:8453', transaction_hash } })
 */
export function buildFeeDecision(options: {
  reading: SnapshotReading;
  payment: DecisionPayment;
}): FeeDecision {
  const { reading, payment } = options;
  const result = decideSendWait(reading.snapshot);
  return {
    data: {
      fee_rates_sat_vb: result.fee_rates_sat_vb,
      mempool: result.mempool,
      potential_savings: result.potential_savings,
      decision: result.decision,
      reason_codes: result.reason_codes,
    },
    meta: {
      ...buildSharedMeta(reading),
      schema_version: SCHEMA_VERSION,
      evidence: reading.evidence,
      payment: {
        amount: PAYMENT_AMOUNT,
        currency: PAYMENT_CURRENCY,
        facilitator: payment.facilitator,
        network: payment.network,
        transaction_hash: payment.transaction_hash,
      },
    },
    limitations: [...LIMITATIONS],
  };
}
