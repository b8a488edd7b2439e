// A scripted double of an outside facilitator: it answers what the audit in progress scripts.
import {
  type FacilitatorClient,
  FacilitatorError,
  type SettleResponse,
  type SupportedResponse,
  type VerifyResponse,
} from '@tollbooth/core';
import { AUDIT_NETWORK, AUDIT_REVERTED_TX, AUDIT_TX } from './audit-scheme';
import type { AuditControl } from './types';

/** The facilitator double: a `FacilitatorClient` whose answers the audits script. */
export type AuditFacilitator = FacilitatorClient & AuditControl['facilitator'];

const payerOf = (payload: { payload: unknown }) =>
  (payload.payload as { authorization?: { from?: string } }).authorization?.from;

export function createAuditFacilitator(): AuditFacilitator {
  const calls = { verify: 0, settle: 0 };
  const double: AuditFacilitator = {
    verifyAnswer: 'valid',
    settleAnswer: 'success',
    calls,
    async verify(payload): Promise<VerifyResponse> {
      calls.verify++;
      const payer = payerOf(payload);
      if (double.verifyAnswer === 'unreachable') {
        throw new FacilitatorError('network', 'verify', 'connect ECONNREFUSED');
      }
      if (double.verifyAnswer === 'valid') return { isValid: true, payer };
      const invalidReason =
        double.verifyAnswer === 'insufficient'
          ? 'invalid_exact_evm_insufficient_balance'
          : 'invalid_exact_evm_transaction_simulation_failed';
      return { isValid: false, invalidReason, payer };
    },
    async settle(payload, requirements): Promise<SettleResponse> {
      calls.settle++;
      const payer = payerOf(payload);
      if (double.settleAnswer === 'timeout') {
        throw new FacilitatorError('timeout', 'settle', 'no answer within 30000 ms');
      }
      if (double.settleAnswer === 'success') {
        return { success: true, transaction: AUDIT_TX, network: requirements.network, payer };
      }
      // A transaction that reverted: the gate can look it up on chain (the audit's `chain`).
      return {
        success: false,
        errorReason: 'invalid_exact_evm_transaction_failed',
        transaction: AUDIT_REVERTED_TX,
        network: requirements.network,
        payer,
      };
    },
    async supported(): Promise<SupportedResponse> {
      return {
        kinds: [{ x402Version: 2, scheme: 'exact', network: AUDIT_NETWORK }],
        extensions: [],
        signers: {},
      };
    },
  };
  return double;
}
