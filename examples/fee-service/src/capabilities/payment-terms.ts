import type { PaymentOption, Price } from '@tollbooth/core';

/** The payment terms every paid resource shares: network, recipient and token. */
export interface PaymentTerms {
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** Recipient address. */
  payTo: string;
  /** Token contract (USDC). */
  asset: string;
  /** EIP-712 domain name and version of the token. */
  assetName: string;
  assetVersion: string;
}

/** An explicit price in atomic units of the configured token (6-decimal USDC). */
export function priceOf(terms: PaymentTerms, amount: string): Price {
  return { amount, asset: terms.asset, extra: { name: terms.assetName, version: terms.assetVersion } };
}

/** One `exact` payment option on the configured network. */
export function acceptsOf(terms: PaymentTerms, amount: string, maxTimeoutSeconds: number): PaymentOption {
  return {
    scheme: 'exact',
    network: terms.network,
    payTo: terms.payTo,
    price: priceOf(terms, amount),
    maxTimeoutSeconds,
  };
}
