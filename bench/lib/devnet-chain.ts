// The devnet's viem chain rebuilt in a child process from its RPC URL and chain id.
import { type Chain, defineChain, type HttpTransportConfig, http, type Transport } from 'viem';

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

/**
 * viem's HTTP transport to `rpcUrl` (with `config`, e.g. batching) that also counts the JSON-RPC
 * calls it carries, by method, and the HTTP requests carrying them, printed every 200 ms as
 * RPC_CALLS=<json> for the runner (bench/devnet.ts reads it per server process).
 */
export function countingHttp(rpcUrl: string, config: HttpTransportConfig = {}): Transport {
  const calls: Record<string, number> = {};
  let httpRequests = 0;
  let printed = '';
  setInterval(() => {
    const line = JSON.stringify({ httpRequests, calls });
    if (line !== printed) process.stdout.write(`RPC_CALLS=${line}\n`);
    printed = line;
  }, 200).unref();
  return http(rpcUrl, {
    ...config,
    async onFetchRequest(request) {
      httpRequests++;
      const body = (await request.clone().json()) as { method: string } | { method: string }[];
      for (const call of Array.isArray(body) ? body : [body])
        calls[call.method] = (calls[call.method] ?? 0) + 1;
    },
  });
}
