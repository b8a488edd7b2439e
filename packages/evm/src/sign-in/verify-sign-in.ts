import type { SignInProof, SignInVerdict } from '@tollbooth/core';
import {
  type Chain,
  type Client,
  getAddress,
  type Hex,
  isAddress,
  isHex,
  type Transport,
  verifyMessage,
} from 'viem';
import { verifyMessage as verifyMessageOnChain } from 'viem/actions';
import { formatSiweMessage } from './format-siwe-message';

export interface VerifySignInParameters {
  proof: SignInProof;
  /**
   * The network's chain reader, when the scheme has one: the signature is then checked the way
   * the chain sees it (an EOA's ecrecover, an EIP-1271 contract wallet's `isValidSignature`, an
   * EIP-6492 wrapped signature of a wallet not deployed yet). Without it, EOA signatures only.
   */
  client?: Client<Transport, Chain | undefined> | undefined;
}
export type VerifySignInReturnType = SignInVerdict;

/**
 * Checks a sign-in proof on an `eip155` network: its address, then its signature over the
 * EIP-4361 message its fields make. The signer comes back EIP-55 checksummed.
 *
 * @throws what the chain reader throws when it cannot answer (the gate fails closed).
 */
export async function verifySignIn(parameters: VerifySignInParameters): Promise<VerifySignInReturnType> {
  const { proof, client } = parameters;
  if (!isAddress(proof.address, { strict: false }))
    return { ok: false, message: `${proof.address} is not an EVM address` };
  if (!isHex(proof.signature) || proof.signature.length < 4)
    return { ok: false, message: 'the signature is not 0x-prefixed hex' };
  const address = getAddress(proof.address);
  const message = formatSiweMessage({ proof, address });
  const signature = proof.signature as Hex;
  const valid = client
    ? await verifyMessageOnChain(client, { address, message, signature })
    : await verifyMessage({ address, message, signature }).catch(() => false);
  return valid
    ? { ok: true, signer: address }
    : { ok: false, message: `not ${address}'s signature of the message` };
}
