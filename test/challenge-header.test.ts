// The 402 head stays small while the bazaar extension stays whole in the body: the official
// client (@x402/fetch) still pays from the header alone, and what it echoes to the facilitator is
// a bazaar extension the official validator and extractDiscoveryInfo accept.
import {
  decodeHeaderJson,
  type FacilitatorClient,
  type PaymentPayload,
  type PaymentRequired,
} from '@tollbooth/core';
import { addBazaarExtensions } from '@tollbooth/core/discovery';
import { fetchResponseHead } from '@tollbooth/core/testing';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme as OfficialExactEvmClient } from '@x402/evm/exact/client';
import { extractDiscoveryInfo, validateDiscoveryExtension } from '@x402/extensions/bazaar';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  balances,
  deltas,
  devnetFacilitator,
  type Listening,
  PRICE,
  paidRoute,
  payerAccount,
  startTollboothApp,
} from './support/interop-harness';

/** A 200 body schema of the weight of a real one (the fee decision's is 5.4 KB of JSON Schema). */
const Report = z
  .object(
    Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `figure_${i}`,
        z.number().min(0).describe(`Figure number ${i} of the report, in the unit its name says.`),
      ]),
    ),
  )
  .describe('A report whose schema alone is several kilobytes.');

let devnet: Devnet;
let app: Listening;
const echoed: PaymentPayload[] = [];

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 1 });
  const inner = devnetFacilitator(devnet);
  // An observer of what the facilitator receives at settle (a route that settles after its handler
  // verifies locally with the devnet's chain reader, so /verify is not asked); the calls are real.
  const facilitator: FacilitatorClient = {
    verify: (payload, requirements) => inner.verify(payload, requirements),
    settle: (payload, requirements) => {
      echoed.push(payload as PaymentPayload);
      return inner.settle(payload, requirements);
    },
    supported: () => inner.supported(),
  };
  const routes = addBazaarExtensions({
    'GET /report': { ...paidRoute(devnet), discovery: { output: Report } },
  });
  app = await startTollboothApp(devnet, { routes, facilitator });
});

afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

describe('a challenge whose bazaar extension carries a large output schema', () => {
  it('keeps the output schema in the 402 body and a head under 4 KB', async () => {
    const head = await fetchResponseHead(`${app.url}/report`);
    expect(head.status).toBe(402);
    expect(head.bytes).toBeLessThanOrEqual(4096);
    const header = decodeHeaderJson(head.header('payment-required')!) as PaymentRequired;
    const body = (await (await fetch(`${app.url}/report`)).json()) as PaymentRequired;
    const outputOf = (challenge: PaymentRequired) =>
      (challenge.extensions!['bazaar'] as { schema: { properties: { output: { properties: object } } } })
        .schema.properties.output.properties;
    expect(outputOf(body)).toHaveProperty('example.properties.figure_39');
    expect(outputOf(header)).toEqual({ type: { type: 'string' } });
    expect(JSON.stringify(body).length).toBeGreaterThan(4096);
    expect(header.accepts).toEqual(body.accepts);
  });

  it('is paid by the official client, which echoes a bazaar extension the official validator accepts', async () => {
    const payer = payerAccount(devnet, 0);
    const before = await balances(devnet, payer.address);
    const pay = wrapFetchWithPayment(
      fetch,
      new x402Client().register('eip155:*', new OfficialExactEvmClient(payer)),
    );
    const response = await pay(`${app.url}/report`);
    expect(response.status).toBe(200);
    expect(await deltas(devnet, payer.address, before)).toEqual({ paid: PRICE, received: PRICE });

    expect(echoed).toHaveLength(1);
    const payload = echoed[0]!;
    const bazaar = payload.extensions?.['bazaar'];
    expect(validateDiscoveryExtension(bazaar as never)).toEqual({ valid: true });
    const found = extractDiscoveryInfo(payload as never, payload.accepted as never);
    expect(found).toMatchObject({ x402Version: 2, method: 'GET', resourceUrl: `${app.url}/report` });
  });
});
