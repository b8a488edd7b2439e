import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import { compileRoutes } from '../routes/compile-routes';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { checkFacilitatorSupport, paymentKindsOf } from './check-facilitator-support';
import { FacilitatorError } from './facilitator-error';
import { createHttpFacilitatorClient } from './http-facilitator-client';

// A real HTTP facilitator whose /supported answer each test sets.
let server: Server;
let url: string;
let answer: { status: number; body: unknown };

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url !== '/supported') return res.writeHead(404).end();
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const routes = compileRoutes(
  {
    'GET /base': { accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' } },
    'GET /sepolia': { accepts: { network: 'eip155:84532', payTo: TEST_PAY_TO, price: '$0.001' } },
    'GET /gone': {
      accepts: { network: 'eip155:10', payTo: TEST_PAY_TO, price: { amount: '1000', asset: TEST_PAY_TO } },
      availability: 'retired',
    },
  },
  { schemes: [createSimpleScheme()] },
);

const kind = (network: string, x402Version = 2) => ({ x402Version, scheme: 'exact', network });

describe('checkFacilitatorSupport', () => {
  it('reads the kinds of the live routes, one each, retired routes aside', () => {
    expect(paymentKindsOf(routes)).toEqual(
      expect.arrayContaining([
        { scheme: 'exact', network: 'eip155:8453', x402Version: 2 },
        { scheme: 'exact', network: 'eip155:84532', x402Version: 2 },
      ]),
    );
    expect(paymentKindsOf(routes)).toHaveLength(2);
  });

  it('passes when every kind is supported, and returns the answer', async () => {
    answer = { status: 200, body: { kinds: [kind('eip155:84532'), kind('eip155:8453'), kind('base', 1)] } };
    const facilitator = createHttpFacilitatorClient({ url });
    const supported = await checkFacilitatorSupport({ facilitator, routes });
    expect(supported.kinds).toHaveLength(3);
  });

  it('refuses, naming every missing kind and what the facilitator offers', async () => {
    // A testnet facilitator: Base Sepolia only, and Base mainnet only in v1.
    answer = { status: 200, body: { kinds: [kind('eip155:84532'), kind('eip155:8453', 1)] } };
    const facilitator = createHttpFacilitatorClient({ url });
    const error = await checkFacilitatorSupport({
      facilitator,
      routes,
      kinds: [{ scheme: 'upto', network: 'eip155:84532' }],
      name: url,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TollboothConfigError);
    expect((error as TollboothConfigError).problems).toEqual([
      `${url} does not support upto on eip155:84532 (x402 v2)`,
      `${url} does not support exact on eip155:8453 (x402 v2)`,
      `${url} supports: exact on eip155:84532 (x402 v2), exact on eip155:8453 (x402 v1)`,
    ]);
  });

  it('passes on the facilitator error when /supported does not answer', async () => {
    answer = { status: 503, body: { error: 'down' } };
    const facilitator = createHttpFacilitatorClient({ url });
    const error = await checkFacilitatorSupport({ facilitator, routes }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect((error as FacilitatorError).kind).toBe('http-5xx');
  });
});
