import { defineAsset, type EvmAsset } from './define-asset';

/** USDC on Base mainnet. */
export const baseUsdc: EvmAsset = defineAsset({
  network: 'eip155:8453',
  address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  name: 'USD Coin',
  version: '2',
  decimals: 6,
  symbol: 'USDC',
});

/** USDC on Base Sepolia (note the EIP-712 name `USDC`, not `USD Coin`). */
export const baseSepoliaUsdc: EvmAsset = defineAsset({
  network: 'eip155:84532',
  address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  name: 'USDC',
  version: '2',
  decimals: 6,
  symbol: 'USDC',
});

/** The assets a USD price resolves to when no other asset is configured for a network. */
export const DEFAULT_ASSETS: readonly EvmAsset[] = Object.freeze([baseUsdc, baseSepoliaUsdc]);
