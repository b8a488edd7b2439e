import {
  type PaymentPayload,
  type PaymentPayloadV1,
  type PaymentRequired,
  type PaymentRequiredV1,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  V1_NETWORKS,
} from '@tollbooth/core';
import { getAddress, isAddress, type LocalAccount } from 'viem';
import { EXACT_SCHEME } from '../constants';
import { EvmErrorCode, EvmSchemeError } from '../errors';
import type { ExactEvmPayloadData } from '../payload/exact-evm-payload';
import { createAuthorizationNonce } from '../utils/create-authorization-nonce';
import { getChainId } from '../utils/get-chain-id';
import { signTransferAuthorization } from './sign-transfer-authorization';

export interface CreatePaymentPayloadParameters<T extends PaymentRequired | PaymentRequiredV1> {
  /** The server's challenge (v2 from `PAYMENT-REQUIRED`, or a v1 402 body). */
  paymentRequired: T;
  /** The payer. */
  account: Pick<LocalAccount, 'address' | 'signTypedData'>;
  /**
   * Picks the requirement to pay among those this function can pay (scheme `exact` on an
   * `eip155` network with an EIP-712 domain). Default: the first.
   */
  select?:
    | ((
        payable: readonly (T extends PaymentRequired ? PaymentRequirements : PaymentRequirementsV1)[],
      ) => (T extends PaymentRequired ? PaymentRequirements : PaymentRequirementsV1) | undefined)
    | undefined;
  /** Unix seconds. Default: the clock. */
  now?: number | undefined;
}
export type CreatePaymentPayloadReturnType<T extends PaymentRequired | PaymentRequiredV1> =
  T extends PaymentRequired ? PaymentPayload : PaymentPayloadV1;
export type CreatePaymentPayloadErrorType = EvmSchemeError;

function chainIdOf(network: string): number | undefined {
  return getChainId(V1_NETWORKS[network] ?? network);
}

function isPayable(requirement: PaymentRequirements | PaymentRequirementsV1): boolean {
  const extra = requirement.extra;
  return (
    requirement.scheme === EXACT_SCHEME &&
    chainIdOf(requirement.network) !== undefined &&
    isAddress(requirement.asset, { strict: false }) &&
    isAddress(requirement.payTo, { strict: false }) &&
    typeof extra?.['name'] === 'string' &&
    typeof extra?.['version'] === 'string'
  );
}

/**
 * Pays an x402 challenge with an EIP-3009 authorization: picks an `exact` requirement on an EVM
 * network, signs `TransferWithAuthorization` for exactly its amount (random 32-byte nonce,
 * `validAfter` 0 — v1: now − 600 s, as the official v1 client — and `validBefore` now +
 * `maxTimeoutSeconds`) and builds the payload. v2: `accepted` and `resource` are copied verbatim
 * and the server's extensions echoed.
 *
 * @throws {EvmSchemeError} `payment_requirements_mismatch` when nothing in `accepts` can be paid.
 * @example
 * const payload = await createPaymentPayload({ paymentRequired, account: privateKeyToAccount(key) });
 * headers['PAYMENT-SIGNATURE'] = Buffer.from(JSON.stringify(payload)).toString('base64');
 */
export async function createPaymentPayload<T extends PaymentRequired | PaymentRequiredV1>(
  parameters: CreatePaymentPayloadParameters<T>,
): Promise<CreatePaymentPayloadReturnType<T>> {
  const { paymentRequired, account, select } = parameters;
  const now = Math.floor(parameters.now ?? Date.now() / 1000);
  const accepts = paymentRequired.accepts as readonly (PaymentRequirements | PaymentRequirementsV1)[];
  const payable = accepts.filter(isPayable);
  const chosen = select
    ? (select as unknown as (list: typeof payable) => (typeof payable)[number] | undefined)(payable)
    : payable[0];
  if (!chosen || !payable.includes(chosen)) {
    throw new EvmSchemeError(
      EvmErrorCode.noPayableRequirement,
      `None of the ${accepts.length} payment requirement(s) is scheme "exact" on an eip155 network with an EIP-712 domain`,
    );
  }
  const v1 = paymentRequired.x402Version === 1;
  const amount = v1
    ? (chosen as PaymentRequirementsV1).maxAmountRequired
    : (chosen as PaymentRequirements).amount;
  const authorization = {
    from: account.address,
    to: getAddress(chosen.payTo),
    value: amount,
    validAfter: v1 ? String(Math.max(0, now - 600)) : '0',
    validBefore: String(now + chosen.maxTimeoutSeconds),
    nonce: createAuthorizationNonce(),
  };
  const signature = await signTransferAuthorization({
    account,
    domain: {
      name: chosen.extra?.['name'] as string,
      version: chosen.extra?.['version'] as string,
      chainId: chainIdOf(chosen.network)!,
      verifyingContract: getAddress(chosen.asset),
    },
    authorization,
  });
  const payload: ExactEvmPayloadData = { signature, authorization };
  if (v1) {
    const result: PaymentPayloadV1 = {
      x402Version: 1,
      scheme: chosen.scheme,
      network: chosen.network,
      payload: payload as unknown as Record<string, unknown>,
    };
    return result as CreatePaymentPayloadReturnType<T>;
  }
  const required = paymentRequired as PaymentRequired;
  const result: PaymentPayload = {
    x402Version: 2,
    payload: payload as unknown as Record<string, unknown>,
    ...(required.extensions ? { extensions: required.extensions } : {}),
    resource: required.resource,
    accepted: chosen as PaymentRequirements,
  };
  return result as CreatePaymentPayloadReturnType<T>;
}
