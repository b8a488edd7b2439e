import type { SignInProof } from '@tollbooth/core';
import { getChainId } from '../utils/get-chain-id';

export interface FormatSiweMessageParameters {
  proof: SignInProof;
  /** The signer in its EIP-55 spelling (the message always carries the checksummed address). */
  address: string;
}
export type FormatSiweMessageReturnType = string;

/**
 * The EIP-4361 (Sign-In with Ethereum) message a sign-in proof on an `eip155` network signs, line
 * for line as the reference SIWE library prepares it: header, address, optional statement, then
 * URI, Version, Chain ID, Nonce, Issued At and the optional fields in the standard's order.
 *
 * @throws Error when the proof's chain is not `eip155:<number>`.
 */
export function formatSiweMessage(parameters: FormatSiweMessageParameters): FormatSiweMessageReturnType {
  const { proof, address } = parameters;
  const chainId = getChainId(proof.chainId);
  if (chainId === undefined) throw new Error(`${proof.chainId} is not an eip155 chain`);
  const header = `${proof.domain} wants you to sign in with your Ethereum account:\n${address}`;
  const fields = [
    `URI: ${proof.uri}`,
    `Version: ${proof.version}`,
    `Chain ID: ${chainId}`,
    `Nonce: ${proof.nonce}`,
    `Issued At: ${proof.issuedAt}`,
  ];
  if (proof.expirationTime) fields.push(`Expiration Time: ${proof.expirationTime}`);
  if (proof.notBefore) fields.push(`Not Before: ${proof.notBefore}`);
  if (proof.requestId !== undefined) fields.push(`Request ID: ${proof.requestId}`);
  if (proof.resources) fields.push(['Resources:', ...proof.resources.map((r) => `- ${r}`)].join('\n'));
  const head = proof.statement === undefined ? `${header}\n\n` : `${header}\n\n${proof.statement}\n`;
  return `${head}\n${fields.join('\n')}`;
}
