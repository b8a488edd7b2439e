import { fromAtomicAmount } from '@tollbooth/core';

/**
 * The send-or-wait decision's offer, written once: its route and its price, 1000 atomic units of
 * the configured 6-decimal token (0.001 USDC) with a 60 s max timeout
 * (docs/fee-service-contract.md#limits). Its declaration sells it; the free preview advertises it,
 * the x402 demo rehearses its terms and the dashboard offers it.
 */
export const FEE_DECISION_OFFER = {
  method: 'GET',
  path: '/api/v1/fees/now',
  price: { amount: '1000', maxTimeoutSeconds: 60 },
} as const;

/** The price in USDC as the bodies write it (`0.001`), from the one amount. */
export const FEE_DECISION_USDC = fromAtomicAmount(FEE_DECISION_OFFER.price.amount, 6);

/** The currency the bodies name. */
export const FEE_DECISION_CURRENCY = 'USDC';
