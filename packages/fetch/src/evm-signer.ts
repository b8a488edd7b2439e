import {
  type PaymentRequired,
  type PaymentRequiredV1,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  V1_NETWORKS,
} from '@tollbooth/core';
import { createPaymentPayload, formatSiweMessage, getChainId } from '@tollbooth/evm';
import { getAddress, type LocalAccount } from 'viem';
import type { PaymentSigner } from './paying-fetch';
import { encodeSignInProof, type SignInOffer } from './sign-in';

export interface CreateEvmPaymentSignerParameters {
  /**
   * The payer, e.g. `privateKeyToAccount(key)`. With `signMessage` it also signs in where it paid
   * (sign-in-with-x, docs/sign-in-with-x.md).
   */
  account: Pick<LocalAccount, 'address' | 'signTypedData'> & Partial<Pick<LocalAccount, 'signMessage'>>;
}

/** The EIP-4361 message of an EVM sign-in offer, signed by the account: the `SIGN-IN-WITH-X` value. */
async function signIn(
  offer: SignInOffer,
  account: Pick<LocalAccount, 'address'> & Partial<Pick<LocalAccount, 'signMessage'>>,
): Promise<string | undefined> {
  if (offer.type !== 'eip191' || getChainId(offer.chainId) === undefined || !account.signMessage)
    return undefined;
  const proof = {
    ...offer.info,
    address: account.address,
    chainId: offer.chainId,
    type: offer.type,
    signature: '',
  };
  // The message names the address in its EIP-55 spelling, as the server (and SIWE) formats it.
  const message = formatSiweMessage({ proof, address: getAddress(account.address) });
  return encodeSignInProof(offer, account.address, await account.signMessage({ message }));
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
    ...(account.signMessage ? { signIn: (offer: SignInOffer) => signIn(offer, account) } : {}),
  };
}
