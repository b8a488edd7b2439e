// The official x402 facilitator (x402Facilitator + the exact EVM facilitator scheme of
// @x402/evm, signer from toFacilitatorEvmSigner) served over the standard HTTP API with node:http.
import { createServer, type IncomingMessage } from 'node:http';
import { x402Facilitator } from '@x402/core/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, type Hex, publicActions } from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import { countingHttp, devnetChain, env, POLLING_INTERVAL_MS } from '../lib/devnet-chain';
import { announce } from '../lib/serve';

const rpcUrl = env('DEVNET_RPC_URL');
const chainId = Number(env('DEVNET_CHAIN_ID'));
const account = privateKeyToAccount(env('FACILITATOR_KEY') as Hex, { nonceManager });
const client = createWalletClient({
  account,
  chain: devnetChain(rpcUrl, chainId),
  // viem's default HTTP transport (no batching), its JSON-RPC calls counted for the runner.
  transport: countingHttp(rpcUrl),
  pollingInterval: POLLING_INTERVAL_MS,
}).extend(publicActions);
const signer = toFacilitatorEvmSigner(Object.assign(client, { address: account.address }) as never);
const facilitator = new x402Facilitator().register(`eip155:${chainId}`, new ExactEvmScheme(signer));

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const server = createServer(async (req, res) => {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  };
  try {
    if (req.method === 'GET' && req.url === '/supported') return send(200, facilitator.getSupported());
    if (req.method === 'POST' && (req.url === '/verify' || req.url === '/settle')) {
      const body = JSON.parse(await readBody(req)) as { paymentPayload: never; paymentRequirements: never };
      const result =
        req.url === '/verify'
          ? await facilitator.verify(body.paymentPayload, body.paymentRequirements)
          : await facilitator.settle(body.paymentPayload, body.paymentRequirements);
      return send(200, result);
    }
    return send(404, { error: 'not found' });
  } catch (error) {
    return send(500, { error: error instanceof Error ? error.message : String(error) });
  }
});
await announce(server);
