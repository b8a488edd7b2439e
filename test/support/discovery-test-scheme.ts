import { type AssetAmount, type Price, type SchemeServer, toAtomicAmount } from '@tollbooth/core';

/** USDC on Base, as the seed's production profile uses it. */
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/**
 * A minimal `exact` scheme for discovery tests: turns USD prices into Base USDC atomic units
 * (6 decimals, EIP-712 domain `USD Coin` / `2`). It never accepts a payment; discovery only needs
 * prices resolved.
 */
export function createDiscoveryTestScheme(): SchemeServer {
  return {
    scheme: 'exact',
    supportsNetwork: (network) => network.startsWith('eip155:'),
    resolvePrice(price: Price): AssetAmount {
      if (typeof price === 'object') return price;
      return {
        amount: toAtomicAmount(price, 6),
        asset: BASE_USDC,
        extra: { name: 'USD Coin', version: '2' },
      };
    },
    preVerify: () => ({ ok: false, reason: 'unsupported', message: 'test scheme pays nothing' }),
  };
}
