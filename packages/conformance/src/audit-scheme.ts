// The suite's own `exact` scheme double: payloads shaped like EIP-3009 authorizations, "signed"
// with a SHA-256 digest instead of secp256k1, so the audits can build valid and defective
// payments without a chain. It checks what the real scheme checks locally, in the same order.
import { createHash, randomBytes } from 'node:crypto';
import {
  encodeHeader,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
  type PreVerifyResult,
  type ReconcileResult,
  type SchemeServer,
  TollboothError,
} from '@tollbooth/core';
import type { PaymentOverrides } from './types';

export const AUDIT_NETWORK = 'eip155:8453';
export const AUDIT_ASSET = '0xA0dA0dA0dA0dA0dA0dA0dA0dA0dA0dA0dA0dA0d0';
export const AUDIT_PAY_TO = '0x5Ea1ed5Ea1ed5Ea1ed5Ea1ed5Ea1ed5Ea1ed5Ea1';
export const AUDIT_PAYER = '0xB0b0B0b0B0b0B0b0B0b0B0b0B0b0B0b0B0b0B0b0';
export const AUDIT_TX = `0x${'a1'.repeat(32)}`;
/** The transaction a refused settlement names: mined, reverted, the authorization left unused. */
export const AUDIT_REVERTED_TX = `0x${'f0'.repeat(32)}`;

type Authorization = Record<'from' | 'to' | 'value' | 'validAfter' | 'validBefore' | 'nonce', string>;

/** The double's "signature" of an authorization. */
export function auditSignature(auth: Authorization): string {
  const fields = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce];
  return `0x${createHash('sha256').update(fields.join('|')).digest('hex')}`;
}

/** A scheme server double whose reconcile answer the suite scripts. */
export interface AuditScheme extends SchemeServer {
  chain: 'settled' | 'unsettled' | 'unknown';
}

export function createAuditScheme(): AuditScheme {
  const scheme: AuditScheme = {
    scheme: 'exact',
    chain: 'unknown',
    supportsNetwork: (network) => network === AUDIT_NETWORK,
    resolvePrice(price) {
      if (typeof price !== 'object')
        throw new TollboothError('invalid_amount', 'the audit scheme takes explicit amounts');
      return price;
    },
    preVerify(payload, requirements, now): PreVerifyResult {
      const { signature, authorization: auth } = payload.payload as {
        signature?: unknown;
        authorization?: Authorization;
      };
      const fail = (reason: string, message: string): PreVerifyResult => ({ ok: false, reason, message });
      const names = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const;
      if (typeof signature !== 'string' || !auth || names.some((name) => typeof auth[name] !== 'string')) {
        return fail(
          'invalid_exact_evm_payload',
          'the payload needs a signature and a complete authorization',
        );
      }
      if (signature !== auditSignature(auth))
        return fail('invalid_exact_evm_signature', 'the signature does not match');
      if (auth.to !== requirements.payTo)
        return fail('invalid_exact_evm_recipient_mismatch', 'wrong recipient');
      if (Number(auth.validBefore) < now + 6) {
        return fail('invalid_exact_evm_payload_authorization_valid_before', 'the authorization expired');
      }
      if (Number(auth.validAfter) > now) {
        return fail(
          'invalid_exact_evm_payload_authorization_valid_after',
          'the authorization is not valid yet',
        );
      }
      if (auth.value !== requirements.amount) {
        return fail(
          'invalid_exact_evm_payload_authorization_value_mismatch',
          'the value differs from the price',
        );
      }
      const identity = [requirements.network, requirements.asset, auth.from, auth.nonce]
        .join(':')
        .toLowerCase();
      return { ok: true, payer: auth.from, identity, validBefore: Number(auth.validBefore) };
    },
    async reconcile({ requirements, payload }): Promise<ReconcileResult> {
      if (scheme.chain === 'unknown') return { status: 'unknown', message: 'the chain was not asked' };
      if (scheme.chain === 'unsettled') return { status: 'unsettled' };
      const payer = (payload.payload as { authorization: Authorization }).authorization.from;
      return {
        status: 'settled',
        receipt: { success: true, transaction: AUDIT_TX, network: requirements.network, payer },
      };
    },
  };
  return scheme;
}

/** Builds the `PAYMENT-SIGNATURE` value of a payment for `challenge.accepts[0]`, with defects. */
export function buildAuditPayment(challenge: PaymentRequired, overrides: PaymentOverrides = {}): string {
  const accepted: PaymentRequirements = { ...challenge.accepts[0]!, ...overrides.accepted };
  let authorization: Authorization = {
    from: AUDIT_PAYER,
    to: accepted.payTo,
    value: accepted.amount,
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + accepted.maxTimeoutSeconds),
    nonce: `0x${randomBytes(32).toString('hex')}`,
  };
  let signature = auditSignature(authorization);
  authorization = { ...authorization, ...overrides.authorization };
  if (overrides.resign) signature = auditSignature(authorization);
  const payment: Omit<PaymentPayload, 'x402Version'> & { x402Version: number } = {
    x402Version: overrides.x402Version ?? 2,
    resource: challenge.resource,
    accepted,
    payload: { signature: overrides.signature ?? signature, authorization },
  };
  return encodeHeader(payment);
}
