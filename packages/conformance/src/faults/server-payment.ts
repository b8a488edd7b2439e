// A payment for a server's own challenge, signed by the kit's payer on the kit's chain: the
// requirement copied verbatim into `accepted`, as the official client does.
import { encodeHeader } from '@tollbooth/core';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { AuditChain, Authorization } from '../facilitator/chain';
import { randomNonce, signAuthorization } from '../facilitator/payments';
import { AuditSetupError } from '../facilitator/run';
import type { Answer } from '../http';

/** The payment header and what it authorizes. */
export interface ServerPayment {
  header: string;
  authorization: Authorization;
  /** The requirement paid (payTo, amount). */
  requirement: Record<string, unknown>;
}

/** Picks the challenge's requirement the kit can pay: exact on its chain, in its token. */
export function payableRequirement(
  chain: AuditChain,
  challenge: Record<string, unknown>,
): Record<string, unknown> {
  const accepts = Array.isArray(challenge['accepts'])
    ? (challenge['accepts'] as Record<string, unknown>[])
    : [];
  const token = chain.config.token.address.toLowerCase();
  const found = accepts.find(
    (r) =>
      r?.['scheme'] === 'exact' &&
      r['network'] === chain.network &&
      String(r['asset']).toLowerCase() === token,
  );
  if (!found) {
    const offered = accepts.map((r) => `${r?.['scheme']} on ${r?.['network']} in ${r?.['asset']}`).join('; ');
    throw new AuditSetupError(
      `the challenge offers no exact payment on ${chain.network} in ${chain.config.token.address} (it offers: ${offered || 'nothing'}); configure the server for the kit's chain`,
    );
  }
  return found;
}

/** Signs a payment for the server's challenge (from the `PAYMENT-REQUIRED` header of `unpaid`). */
export async function paymentFor(
  chain: AuditChain,
  challenge: Record<string, unknown>,
  payerKey?: Hex,
): Promise<ServerPayment> {
  const requirement = payableRequirement(chain, challenge);
  const key = payerKey ?? chain.config.payers[0]!;
  const authorization: Authorization = {
    from: privateKeyToAccount(key).address,
    to: String(requirement['payTo']) as Authorization['to'],
    value: String(requirement['amount']),
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + Number(requirement['maxTimeoutSeconds'] ?? 60)),
    nonce: randomNonce(),
  };
  const extra = (requirement['extra'] ?? {}) as { name?: unknown; version?: unknown };
  const domain =
    typeof extra.name === 'string' && typeof extra.version === 'string'
      ? { name: extra.name, version: extra.version }
      : chain.config.token;
  const signature = await signAuthorization(chain, key, authorization, domain);
  const payload = {
    x402Version: 2,
    resource: challenge['resource'],
    accepted: requirement,
    payload: { signature, authorization },
    ...(challenge['extensions'] ? { extensions: challenge['extensions'] } : {}),
  };
  return { header: encodeHeader(payload), authorization, requirement };
}

/** The decoded settlement receipt of an answer (`PAYMENT-RESPONSE`, or the legacy `X-PAYMENT-RESPONSE`). */
export function receiptOf(answer: Answer): Record<string, unknown> | undefined {
  const value = answer.header('payment-response') ?? answer.header('x-payment-response');
  if (!value) return undefined;
  try {
    return JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
