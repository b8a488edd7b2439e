import type { Address } from 'viem';

/** Where Multicall3 lives on every chain; the devnet installs a compatible contract there. */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** The real USDC deployments the devnet can imitate: address and EIP-712 domain per chain id. */
export const CANONICAL_USDC: Readonly<
  Record<number, { readonly address: Address; readonly name: string; readonly version: string }>
> = {
  8453: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2' },
  84532: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2' },
};

/** The mnemonic anvil funds by default (public, for local tests only). */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
