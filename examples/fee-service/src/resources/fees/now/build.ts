import { LIMITATIONS } from '../../../domain/constants';
import { decideSendWait } from '../../../domain/send-wait';
import type { SnapshotReading } from '../../../domain/types';
import { buildSnapshotMeta } from '../../shared/snapshot-meta';
import { FEE_DECISION_CURRENCY, FEE_DECISION_USDC } from './offer';
import { type FeeDecision, SCHEMA_VERSION } from './schema';

/** Settlement facts of the payment that bought a decision, supplied by the payment wiring. */
export interface DecisionPayment {
  /** Name of the facilitator that settled. */
  facilitator: string;
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** `0x` + 64 hex settlement transaction hash. */
  transaction_hash: string;
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
      ...buildSnapshotMeta(reading),
      schema_version: SCHEMA_VERSION,
      evidence: reading.evidence,
      payment: {
        amount: FEE_DECISION_USDC,
        currency: FEE_DECISION_CURRENCY,
        facilitator: payment.facilitator,
        network: payment.network,
        transaction_hash: payment.transaction_hash,
      },
    },
    limitations: [...LIMITATIONS],
  };
}
