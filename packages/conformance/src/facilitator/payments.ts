// Real EIP-3009 payments for the facilitator audits, signed with viem (EIP-712), valid or with one
// defect each. The token contract is the judge of the signatures, so nothing here is trusted; the
// kit signs with viem alone rather than @tollbooth/evm, since it judges Tollbooth's facilitator too.
import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AuditChain, Authorization } from './chain';

const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The v2 requirement every audit pays (scheme exact on the audited chain). */
export interface AuditRequirements {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
}

/** A signed payment and the request bodies that carry it. */
export interface AuditPayment {
  authorization: Authorization;
  signature: Hex;
  requirements: AuditRequirements;
  /** `{x402Version: 2, paymentPayload, paymentRequirements}`. */
  body: { x402Version: number; paymentPayload: Record<string, unknown>; paymentRequirements: unknown };
}

/** What a payment may get wrong (everything else is right). */
export interface PaymentDefects {
  /** Pay from this key instead of the first payer. */
  payerKey?: Hex;
  /** Sign with this key while naming the payer as `from`. */
  signerKey?: Hex;
  to?: string;
  value?: bigint;
  validAfter?: number;
  validBefore?: number;
  /** Patches of the requirement (in `accepted` and in `paymentRequirements` alike). */
  requirements?: Partial<AuditRequirements>;
}

const now = () => Math.floor(Date.now() / 1000);

/** 32 random bytes as 0x-hex: an EIP-3009 nonce. */
export const randomNonce = (): Hex => `0x${randomBytes(32).toString('hex')}`;

/** A fresh key that holds nothing. */
export const emptyKey = (): Hex => generatePrivateKey();

export function auditRequirements(chain: AuditChain): AuditRequirements {
  const { token, payTo } = chain.config;
  return {
    scheme: 'exact',
    network: chain.network,
    amount: chain.amount.toString(),
    asset: token.address,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: token.name, version: token.version },
  };
}

/**
 * Signs an EIP-3009 `TransferWithAuthorization` with `key`, over the token's EIP-712 domain (its
 * name and version from the chain config unless `domain` names others, as a challenge's extra may).
 */
export async function signAuthorization(
  chain: AuditChain,
  key: Hex,
  authorization: Authorization,
  domain: { name: string; version: string } = chain.config.token,
): Promise<Hex> {
  const { token } = chain.config;
  return privateKeyToAccount(key).signTypedData({
    domain: {
      name: domain.name,
      version: domain.version,
      chainId: chain.config.chainId,
      verifyingContract: token.address,
    },
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: authorization.from,
      to: authorization.to,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
}

async function signedAuthorization(
  chain: AuditChain,
  requirements: AuditRequirements,
  defects: PaymentDefects,
): Promise<{ authorization: Authorization; signature: Hex }> {
  const payerKey = defects.payerKey ?? chain.config.payers[0]!;
  const authorization: Authorization = {
    from: privateKeyToAccount(payerKey).address,
    to: (defects.to ?? requirements.payTo) as Authorization['to'],
    value: (defects.value ?? BigInt(requirements.amount)).toString(),
    validAfter: String(defects.validAfter ?? 0),
    validBefore: String(defects.validBefore ?? now() + requirements.maxTimeoutSeconds),
    nonce: randomNonce(),
  };
  const signature = await signAuthorization(chain, defects.signerKey ?? payerKey, authorization);
  return { authorization, signature };
}

/** A v2 payment for the audit requirement, with optional defects. */
export async function buildPayment(chain: AuditChain, defects: PaymentDefects = {}): Promise<AuditPayment> {
  const requirements = { ...auditRequirements(chain), ...defects.requirements };
  const { authorization, signature } = await signedAuthorization(chain, requirements, defects);
  const paymentPayload = {
    x402Version: 2,
    resource: {
      url: 'https://conformance.invalid/resource',
      description: 'a tollbooth-conformance audit payment',
      mimeType: 'application/json',
    },
    accepted: requirements,
    payload: { signature, authorization },
  };
  return {
    authorization,
    signature,
    requirements,
    body: { x402Version: 2, paymentPayload, paymentRequirements: requirements },
  };
}

/** v1 network names of the chains the official v1 packages know. */
export const V1_NETWORK_NAMES: Readonly<Record<number, string>> = {
  8453: 'base',
  84532: 'base-sepolia',
  1: 'ethereum',
  11155111: 'sepolia',
  137: 'polygon',
  80002: 'polygon-amoy',
  43114: 'avalanche',
  43113: 'avalanche-fuji',
};

/** A v1 payment (`X-PAYMENT` era body: v1 network name, `maxAmountRequired`). */
export async function buildV1Payment(
  chain: AuditChain,
  network: string,
  defects: PaymentDefects = {},
): Promise<AuditPayment> {
  const base = { ...auditRequirements(chain), ...defects.requirements };
  const { authorization, signature } = await signedAuthorization(chain, base, defects);
  const paymentRequirements = {
    scheme: 'exact',
    network,
    maxAmountRequired: base.amount,
    resource: 'https://conformance.invalid/resource',
    description: 'a tollbooth-conformance audit payment',
    mimeType: 'application/json',
    payTo: base.payTo,
    maxTimeoutSeconds: base.maxTimeoutSeconds,
    asset: base.asset,
    extra: base.extra,
  };
  const paymentPayload = { x402Version: 1, scheme: 'exact', network, payload: { signature, authorization } };
  return {
    authorization,
    signature,
    requirements: base,
    body: { x402Version: 1, paymentPayload, paymentRequirements },
  };
}
