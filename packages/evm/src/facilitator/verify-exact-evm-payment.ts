import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  VerifyResponse,
} from '@tollbooth/core';
import {
  type ChainClient,
  checkAssetDeployed,
  checkSignatureOnChain,
  isTransportError,
  simulateTransfer,
  unknownOutcome,
} from '../checks/chain-checks';
import {
  type CheckedExactEvmRequest,
  type CheckFailure,
  checkRequest,
  checkTerms,
  toExactEvmRequest,
} from '../checks/exact-evm-request';

export interface VerifyExactEvmPaymentParameters {
  /** A viem client on the payment's network; its account (if any) is the simulated caller. */
  client: ChainClient;
  payload: PaymentPayload | PaymentPayloadV1;
  /** The server's own requirement. */
  requirements: PaymentRequirements | PaymentRequirementsV1;
  /** Unix seconds. Default: the clock. */
  now?: number | undefined;
  /** Simulate `transferWithAuthorization` with eth_call. Default true. */
  simulate?: boolean | undefined;
}
export type VerifyExactEvmPaymentReturnType = VerifyResponse;

/** Internal: the checked request and the signature bytes the token will check, or why not. */
export async function verifyExactEvmRequest(
  parameters: VerifyExactEvmPaymentParameters,
): Promise<CheckFailure | { ok: true; request: CheckedExactEvmRequest; signature: `0x${string}` }> {
  const { client, payload, requirements } = parameters;
  const now = parameters.now ?? Math.floor(Date.now() / 1000);
  const checked = checkRequest(toExactEvmRequest(payload, requirements));
  if (!checked.ok) return checked;
  const request = checked.request;
  const chainId = client.chain?.id;
  if (chainId !== undefined && chainId !== request.chainId) {
    return {
      ok: false,
      reason: 'invalid_exact_evm_network_mismatch',
      message: `this facilitator settles on eip155:${chainId}, not ${request.network}`,
      payer: request.payload.authorization.from,
    };
  }
  const signature = await checkSignatureOnChain(client, request);
  if (!signature.ok) return signature;
  const terms = checkTerms(request, now);
  if (terms) return terms;
  const asset = await checkAssetDeployed(client, request);
  if (asset) return asset;
  if (parameters.simulate !== false) {
    const simulation = await simulateTransfer(client, request, signature.signature);
    if (simulation) return simulation;
  }
  return { ok: true, request, signature: signature.signature };
}

/**
 * Verifies an exact EVM payment against the chain with the official checks, in the official order
 * and with the official reason strings: scheme, EIP-712 domain present, network, signature (ECDSA,
 * or ERC-1271 for deployed smart wallets), recipient, `validBefore ≥ now + 6 s`, `validAfter ≤ now`,
 * exact value, token deployed, then a simulated `transferWithAuthorization` whose failure is
 * diagnosed (nonce already used, token name or version mismatch, insufficient balance, else
 * simulation failed).
 *
 * @throws {FacilitatorError} when the node does not answer (outcome unknown).
 * @example
 * const response = await verifyExactEvmPayment({ client: walletClient, payload, requirements });
 */
export async function verifyExactEvmPayment(
  parameters: VerifyExactEvmPaymentParameters,
): Promise<VerifyExactEvmPaymentReturnType> {
  try {
    const result = await verifyExactEvmRequest(parameters);
    if (!result.ok) {
      return {
        isValid: false,
        invalidReason: result.reason,
        ...(result.message ? { invalidMessage: result.message } : {}),
        ...(result.payer ? { payer: result.payer } : {}),
      };
    }
    return { isValid: true, payer: result.request.payload.authorization.from };
  } catch (error) {
    if (isTransportError(error)) throw unknownOutcome('verify', error);
    throw error;
  }
}
