// The smallest Koa paywall: one route at $0.001 in USDC on Base, settled by a facilitator.
import Router from '@koa/router';
import { createHttpFacilitatorClient, type FacilitatorClient } from '@tollbooth/core';
import { startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/koa';
import Koa from 'koa';

export function createApp({ payTo, facilitator }: { payTo: string; facilitator: FacilitatorClient }) {
  const app = new Koa();
  const router = new Router().get('/joke', (ctx) => {
    ctx.body = { joke: 'There are 10 kinds of people.', paidBy: ctx.state.payment?.payer };
  });
  const accepts = { network: 'eip155:8453', payTo, price: '$0.001' };
  app.use(
    tollbooth({ routes: { 'GET /joke': { accepts } }, schemes: [createExactEvmScheme()], facilitator }),
  );
  return app.use(router.routes());
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
