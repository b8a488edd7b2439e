import { getAddress, type Hex, type LocalAccount } from 'viem';
import { transferWithAuthorizationTypes } from '../constants';
import type {
  TransferAuthorization,
  TransferAuthorizationDomain,
} from '../signature/hash-transfer-authorization';

export interface SignTransferAuthorizationParameters {
  /** The payer; `authorization.from` must be its address. */
  account: Pick<LocalAccount, 'address' | 'signTypedData'>;
  domain: TransferAuthorizationDomain;
  authorization: TransferAuthorization;
}
export type SignTransferAuthorizationReturnType = Hex;

/**
 * Signs an EIP-3009 `TransferWithAuthorization` (EIP-712) with a viem account.
 *
 * @example
 * const signature = await signTransferAuthorization({ account, domain, authorization });
 */
export async function signTransferAuthorization(
  parameters: SignTransferAuthorizationParameters,
): Promise<SignTransferAuthorizationReturnType> {
  const { account, domain, authorization: a } = parameters;
  return account.signTypedData({
    domain: { ...domain, verifyingContract: getAddress(domain.verifyingContract) },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: getAddress(a.from),
      to: getAddress(a.to),
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce,
    },
  });
}
