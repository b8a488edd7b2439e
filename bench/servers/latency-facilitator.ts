// The facilitator of the latency benchmark: Tollbooth's standalone facilitator (the in-process EVM
// facilitator served over the standard HTTP API) settling on the devnet, reached through one fault
// proxy per stack (`STACKS`), each delaying every request and every answer by `DELAY_MS`: a
// facilitator that far away, and per-stack counts of the calls that reached it. Prints
// `PROXY_<stack>=<url>` for each before its own port.
import { createExactEvmFacilitator } from '@tollbooth/evm';
import { startFacilitatorFaultProxy, startFacilitatorServer } from '@tollbooth/facilitator';
import type { Hex } from 'viem';
import { devnetChain, env, POLLING_INTERVAL_MS } from '../lib/devnet-chain';
import { announce } from '../lib/serve';

const rpcUrl = env('DEVNET_RPC_URL');
const facilitator = createExactEvmFacilitator({
  account: env('FACILITATOR_KEY') as Hex,
  chain: devnetChain(rpcUrl, Number(env('DEVNET_CHAIN_ID'))),
  rpcUrl,
  pollingIntervalMs: POLLING_INTERVAL_MS,
});
const server = await startFacilitatorServer({ facilitator });
const delayMs = Number(env('DELAY_MS'));
const proxies = await Promise.all(
  env('STACKS')
    .split(',')
    .map(
      async (stack) => [stack, await startFacilitatorFaultProxy({ target: server.url, delayMs })] as const,
    ),
);
await announce(server.server, {
  info: Object.fromEntries(proxies.map(([stack, proxy]) => [`PROXY_${stack}`, proxy.url])),
  stop: async () => {
    await Promise.all(proxies.map(([, proxy]) => proxy.close()));
    await server.close();
  },
});
