import {
  type PaymentRequired,
  type PaymentRequiredV1,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  V1_NETWORKS,
} from '@tollbooth/core';
import { createPaymentPayload, getChainId } from '@tollbooth/evm';
import type { LocalAccount } from 'viem';
import type { PaymentSigner } from './paying-fetch';

export interface CreateEvmPaymentSignerParameters {
  /** The payer, e.g. `privateKeyToAccount(key)`. */
  account: Pick<LocalAccount, 'address' | 'signTypedData'>;
}

/**
 * A `PaymentSigner` that pays `exact` requirements on EVM networks with EIP-3009
 * authorizations signed by `account` (v2 and v1 challenges).
 */
export function createEvmPaymentSigner({ account }: CreateEvmPaymentSignerParameters): PaymentSigner {
  return {
    supports(requirement, x402Version) {
      const network =
        x402Version === 1 ? (V1_NETWORKS[requirement.network] ?? requirement.network) : requirement.network;
      return (
        requirement.scheme === 'exact' &&
        getChainId(network) !== undefined &&
        typeof requirement.extra?.['name'] === 'string' &&
        typeof requirement.extra?.['version'] === 'string'
      );
    },
    createPayload: (paymentRequired: PaymentRequired, requirement: PaymentRequirements) =>
      createPaymentPayload({ paymentRequired, account, select: () => requirement }),
    createPayloadV1: (paymentRequired: PaymentRequiredV1, requirement: PaymentRequirementsV1) =>
      createPaymentPayload({ paymentRequired, account, select: () => requirement }),
  };
}
