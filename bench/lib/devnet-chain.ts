// The devnet's viem chain rebuilt in a child process from its RPC URL and chain id.
import { type Chain, defineChain } from 'viem';

export const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

export function devnetChain(rpcUrl: string, chainId: number): Chain {
  return defineChain({
    id: chainId,
    name: `Tollbooth devnet (${chainId})`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3 } },
    testnet: true,
  });
}

/** Reads a required environment variable. */
export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/** How often the settling clients poll for receipts (both facilitators get the same). */
export const POLLING_INTERVAL_MS = 50;
