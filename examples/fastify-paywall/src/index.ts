// The smallest Fastify paywall: one route at $0.001 in USDC on Base Sepolia, settled by a facilitator.
import { createHttpFacilitatorClient, type FacilitatorClient } from '@tollbooth/core';
import { startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/fastify';
import Fastify from 'fastify';

export async function createApp({ payTo, facilitator }: { payTo: string; facilitator: FacilitatorClient }) {
  const app = Fastify();
  await app.register(tollbooth, { schemes: [createExactEvmScheme()], facilitator });
  const payment = { accepts: { network: 'eip155:84532', payTo, price: '$0.001' } };
  app.get('/joke', { config: { payment } }, async (request) => ({
    joke: 'There are 10 kinds of people.',
    paidBy: request.payment?.payer,
  }));
  return app;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // FACILITATOR_URL (and PAY_TO) for a real facilitator; otherwise a local chain and facilitator.
  const url = process.env['FACILITATOR_URL'];
  const port = Number(process.env['PORT'] ?? 4021);
  const devnet = url
    ? undefined
    : await startDevnet({ chainId: 84532 }).catch((error: Error) => {
        console.error(error.message);
        return process.exit(1);
      });
  const facilitator = devnet
    ? createExactEvmFacilitator(devnet.facilitatorOptions)
    : createHttpFacilitatorClient({ url: url! });
  const payTo = process.env['PAY_TO'] ?? devnet!.accounts.payTo.address;
  // Stop the local chain before exiting: a signal's default action would leave anvil running.
  const exit = (code: number) => void Promise.resolve(devnet?.stop()).then(() => process.exit(code));
  const refused = (error: NodeJS.ErrnoException) => {
    console.error(
      error.code === 'EADDRINUSE' ? `port ${port} is in use: set PORT to a free port` : error.message,
    );
    exit(1);
  };
  const app = await createApp({ payTo, facilitator });
  app.listen({ port }).then((address) => console.log(`GET ${address}/joke`), refused);
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => app.close().then(() => exit(0)));
}
