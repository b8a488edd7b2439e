// The smallest Express paywall: one route at $0.001 in USDC on Base Sepolia, settled by a facilitator.
import type { AddressInfo } from 'node:net';
import { createHttpFacilitatorClient, type FacilitatorClient } from '@tollbooth/core';
import { startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import express from 'express';

export function createApp({ payTo, facilitator }: { payTo: string; facilitator: FacilitatorClient }) {
  const app = express();
  const accepts = { network: 'eip155:84532', payTo, price: '$0.001' };
  app.use(
    tollbooth({ routes: { 'GET /joke': { accepts } }, schemes: [createExactEvmScheme()], facilitator }),
  );
  app.get('/joke', (req, res) => {
    res.json({ joke: 'There are 10 kinds of people.', paidBy: req.payment?.payer });
  });
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
  const server = createApp({ payTo, facilitator }).listen(port);
  server.once('error', refused).once('listening', () => {
    console.log(`GET http://localhost:${(server.address() as AddressInfo).port}/joke`);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => exit(0)));
}
