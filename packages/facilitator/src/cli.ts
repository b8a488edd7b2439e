#!/usr/bin/env node
// tollbooth-facilitator: a self-hosted x402 facilitator for scheme `exact` on one EVM chain.
import { parseArgs } from 'node:util';
import { createExactEvmFacilitator } from '@tollbooth/evm';
import { defineChain, type Hex } from 'viem';
import { checkChainRpc } from './check-chain-rpc';
import { startFacilitatorServer } from './facilitator-server';

const USAGE = `usage: tollbooth-facilitator --rpc-url URL --chain-id ID [--port 4021] [--host 127.0.0.1]
  The settling account's private key is read from TOLLBOOTH_FACILITATOR_KEY (it pays the gas).
  Before listening it asks the RPC for its chain id and the account's gas: an RPC that does not
  answer, or serves another chain, stops it; an account without gas is a warning on stderr.

Exit codes: 0 stopped by SIGINT or SIGTERM, 1 could not start (RPC unreachable or another
chain, port in use), 2 bad arguments.`;

const { values } = parseArgs({
  options: {
    'rpc-url': { type: 'string' },
    'chain-id': { type: 'string' },
    port: { type: 'string', default: '4021' },
    host: { type: 'string', default: '127.0.0.1' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const problems: string[] = [];
const rpcUrl = values['rpc-url'];
const chainId = Number(values['chain-id']);
const key = process.env['TOLLBOOTH_FACILITATOR_KEY'];
if (!rpcUrl) problems.push('--rpc-url is required');
if (!Number.isInteger(chainId) || chainId <= 0) problems.push('--chain-id must be a positive integer');
if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key))
  problems.push('TOLLBOOTH_FACILITATOR_KEY must be a 0x-prefixed 32-byte hex private key');
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push('--port must be a port number');
if (problems.length > 0 || !rpcUrl || !key) {
  console.error(`${problems.join('\n')}\n\n${USAGE}`);
  process.exit(2);
}

const chain = defineChain({
  id: chainId,
  name: `eip155:${chainId}`,
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [rpcUrl] } },
});
const facilitator = createExactEvmFacilitator({ account: key as Hex, chain, rpcUrl });
const check = await checkChainRpc({ rpcUrl, chainId, address: facilitator.address });
if (check.problem) {
  console.error(`tollbooth-facilitator: cannot start: ${check.problem}`);
  process.exit(1);
}
for (const warning of check.warnings) console.error(`tollbooth-facilitator: WARNING: ${warning}`);
const server = await startFacilitatorServer({ facilitator, port, host: values.host }).catch(
  (error: NodeJS.ErrnoException) => {
    console.error(
      `tollbooth-facilitator: cannot start: ${error.code === 'EADDRINUSE' ? `port ${port} is in use` : error.message}`,
    );
    return process.exit(1);
  },
);
console.log(
  `tollbooth-facilitator: ${server.url} (settling from ${facilitator.address} on eip155:${chainId})`,
);

const stop = async () => {
  await server.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
