// The smallest Express paywall: one route at $0.001 in USDC on Base, settled by a facilitator.
import { createHttpFacilitatorClient, type FacilitatorClient } from '@tollbooth/core';
import { startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import express from 'express';

export function createApp({ payTo, facilitator }: { payTo: string; facilitator: FacilitatorClient }) {
  const app = express();
  const accepts = { network: 'eip155:8453', payTo, price: '$0.001' };
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
  const devnet = url ? undefined : await startDevnet();
  const facilitator = devnet
    ? createExactEvmFacilitator(devnet.facilitatorOptions)
    : createHttpFacilitatorClient({ url: url! });
  const payTo = process.env['PAY_TO'] ?? devnet!.accounts.payTo.address;
  createApp({ payTo, facilitator }).listen(4021, () => console.log('GET http://localhost:4021/joke'));
}
