import type { PaymentPayload, PaymentRequirements, PreVerifyResult } from '@tollbooth/core';
import {
  checkLocalSignature,
  checkRequest,
  checkTerms,
  digestOf,
  identityOf,
  toExactEvmRequest,
} from '../checks/exact-evm-request';
import { ExactEvmReason } from '../constants';
import type { RecoveryBackend } from '../signature/recovery-backends';

export interface PreVerifyExactEvmPaymentParameters {
  payload: PaymentPayload;
  /** The server's own requirement (never the client's copy). */
  requirements: PaymentRequirements;
  /** Unix seconds. */
  now: number;
  /** Force a recovery backend (tests, benchmarks); default native when it loads. */
  backend?: RecoveryBackend | undefined;
  /**
   * Pass a 65-byte signature that does not recover to `from` on to the facilitator instead of
   * refusing it: some ERC-1271 smart wallets sign with an owner key, which only the chain can check.
   * Default false (refuse locally).
   */
  deferMismatchedSignaturesToFacilitator?: boolean | undefined;
}
export type PreVerifyExactEvmPaymentReturnType = PreVerifyResult;

/**
 * Checks an exact EVM payment locally, with no network call, in the official facilitator's order:
 * scheme, payload shape, EIP-712 domain present, network, signature (EIP-712 digest and ECDSA
 * recovery), recipient, `validBefore ≥ now + 6 s`, `validAfter ≤ now`, exact value. Failures carry
 * the official reason strings.
 *
 * A signature that is not 65 bytes (ERC-1271 smart wallet, ERC-6492 counterfactual wallet) cannot
 * be checked without the chain; it passes here and is left to the facilitator (and so, with
 * `deferMismatchedSignaturesToFacilitator`, does a 65-byte signature by another key).
 *
 * @example
 * const result = preVerifyExactEvmPayment({ payload, requirements, now: Math.floor(Date.now() / 1000) });
 * if (result.ok) ledger.claim(result.identity);
 */
export function preVerifyExactEvmPayment(
  parameters: PreVerifyExactEvmPaymentParameters,
): PreVerifyExactEvmPaymentReturnType {
  const { payload, requirements, now, backend, deferMismatchedSignaturesToFacilitator } = parameters;
  const checked = checkRequest(toExactEvmRequest(payload, requirements));
  if (!checked.ok) return { ok: false, reason: checked.reason, message: checked.message };
  const request = checked.request;
  let digest: `0x${string}`;
  try {
    digest = digestOf(request);
  } catch (error) {
    return {
      ok: false,
      reason: ExactEvmReason.signature,
      message: `cannot hash the authorization: ${String(error)}`,
    };
  }
  const signature = checkLocalSignature(request, digest, backend);
  if (signature.kind === 'mismatch' && !deferMismatchedSignaturesToFacilitator) {
    return {
      ok: false,
      reason: ExactEvmReason.signature,
      message:
        signature.recovered === undefined
          ? 'signature is not a valid low-s ECDSA signature'
          : `signature was made by ${signature.recovered}, not by ${request.payload.authorization.from}`,
    };
  }
  const known = {
    payer: request.payload.authorization.from,
    identity: identityOf(request),
    // uint256 on the wire; a safe integer here (anything beyond is 'never expires' in practice).
    validBefore: Math.min(Number(request.payload.authorization.validBefore), Number.MAX_SAFE_INTEGER),
  };
  const terms = checkTerms(request, now);
  if (terms) {
    const outsideWindow =
      terms.reason === ExactEvmReason.validBefore || terms.reason === ExactEvmReason.validAfter;
    // Only a payload whose signature recovered locally is known to be authentic.
    const authentic = signature.kind === 'valid';
    return {
      ok: false,
      reason: terms.reason,
      message: terms.message,
      ...(outsideWindow && authentic ? { known } : {}),
    };
  }
  return { ok: true, ...known, authenticated: signature.kind === 'valid' };
}
