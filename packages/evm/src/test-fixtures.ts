import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@tollbooth/core';
import type { Hex, LocalAccount } from 'viem';
import { createPaymentPayload } from './client/create-payment-payload';

export const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/** A v2 requirement for USDC on Base, with overrides. */
export function buildRequirements(overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '10000',
    asset: BASE_USDC,
    payTo: PAY_TO,
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2' },
    ...overrides,
  };
}

export function buildPaymentRequired(
  accepts: PaymentRequirements[] = [buildRequirements()],
  extensions?: Record<string, unknown>,
): PaymentRequired {
  return {
    x402Version: 2,
    resource: {
      url: 'https://api.example.com/paid',
      description: 'A paid thing',
      mimeType: 'application/json',
    },
    accepts,
    ...(extensions ? { extensions } : {}),
  };
}

/** Signs a payment for `requirements` (v2). */
export async function buildPayment(
  account: LocalAccount,
  requirements: PaymentRequirements = buildRequirements(),
  now?: number,
): Promise<PaymentPayload> {
  return createPaymentPayload({ paymentRequired: buildPaymentRequired([requirements]), account, now });
}

/** A copy of the payment with fields of its authorization replaced (the signature kept). */
export function tamper(payment: PaymentPayload, authorization: Record<string, string>): PaymentPayload {
  const payload = payment.payload as { signature: Hex; authorization: Record<string, string> };
  return {
    ...payment,
    payload: { ...payload, authorization: { ...payload.authorization, ...authorization } },
  };
}
