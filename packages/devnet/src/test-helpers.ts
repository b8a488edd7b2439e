// Shared by the test files of this package (not exported from the index).

import { randomBytes } from 'node:crypto';
import { type Address, type Hex, parseSignature, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Devnet } from './devnet';

export const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export const receiveWithAuthorizationTypes = {
  ReceiveWithAuthorization: transferWithAuthorizationTypes.TransferWithAuthorization,
} as const;

export interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

export function randomNonce(): Hex {
  return toHex(randomBytes(32));
}

/** An authorization from `signerKey`'s address (or `from`) valid for the next hour of chain time. */
export async function buildAuthorization(
  devnet: Devnet,
  overrides: Partial<Authorization> & { from: Address },
): Promise<Authorization> {
  const now = await devnet.latestTimestamp();
  return {
    to: devnet.accounts.payTo.address,
    value: 10_000n,
    validAfter: 0n,
    validBefore: now + 3_600n,
    nonce: randomNonce(),
    ...overrides,
  };
}

/** Signs an EIP-3009 authorization for the devnet token; returns the signature and its v, r, s. */
export async function signAuthorization(
  devnet: Devnet,
  signerKey: Hex,
  authorization: Authorization,
  primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization' = 'TransferWithAuthorization',
  domainOverrides: { name?: string; version?: string } = {},
) {
  const domain = {
    name: domainOverrides.name ?? devnet.token.name,
    version: domainOverrides.version ?? devnet.token.version,
    chainId: devnet.chainId,
    verifyingContract: devnet.token.address,
  };
  const account = privateKeyToAccount(signerKey);
  const signature =
    primaryType === 'TransferWithAuthorization'
      ? await account.signTypedData({
          domain,
          types: transferWithAuthorizationTypes,
          primaryType,
          message: authorization,
        })
      : await account.signTypedData({
          domain,
          types: receiveWithAuthorizationTypes,
          primaryType,
          message: authorization,
        });
  const { v, r, s } = parseSignature(signature);
  return { signature, v: Number(v), r, s };
}

/** The args of the (v, r, s) overload of transferWithAuthorization / receiveWithAuthorization. */
export function vrsArgs(a: Authorization, sig: { v: number; r: Hex; s: Hex }) {
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, sig.v, sig.r, sig.s] as const;
}

/** The args of the bytes-signature overload. */
export function bytesArgs(a: Authorization, signature: Hex) {
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature] as const;
}
