// Discovery mounted beside the payment gate on a real Express app: the documents and the
// challenges come from one route table, so they agree, and change together.
import {
  compileRoutes,
  createHttpFacilitatorClient,
  decodeHeaderJson,
  type PaymentRequired,
} from '@tollbooth/core';
import {
  type CatalogItem,
  createDiscovery,
  type Discovery,
  toHeaderBazaarExtension,
} from '@tollbooth/core/discovery';
import { type TollboothMiddleware, tollbooth } from '@tollbooth/express';
import { extractDiscoveryInfo } from '@x402/extensions/bazaar';
import express from 'express';
import supertest from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { FEE_PREVIEW_ROUTE } from './support/discovery-fee-routes';
import {
  FEE_BASE_URL,
  FEE_FACILITATOR_URL,
  FEE_SIGN_IN,
  feeRoutesConfig,
  feeSchemes,
} from './support/discovery-fixture';

// Unpaid requests never reach the facilitator; nothing listens here.
const facilitator = createHttpFacilitatorClient({ url: 'http://127.0.0.1:9', timeoutMs: 200 });

const EXAMPLES: Record<string, string> = {
  txid: '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b',
  hash_or_height: '170000',
};

/** The app of a service: discovery, then the gate, then the handlers. The gate can be swapped (new prices). */
function buildApp(prices: { nextblock?: string } = {}) {
  const configFor = (nextblock: string) => {
    const config = feeRoutesConfig();
    const route = config['GET /api/v1/mining/nextblock']!;
    config['GET /api/v1/mining/nextblock'] = {
      ...route,
      accepts: { ...(route.accepts as object), price: nextblock } as typeof route.accepts,
    };
    return config;
  };
  const compile = (nextblock: string) =>
    tollbooth({
      // The fee routes sell a sign-in pass on the observatory and the landscape.
      routes: compileRoutes(configFor(nextblock), {
        schemes: feeSchemes,
        baseUrl: FEE_BASE_URL,
        signIn: FEE_SIGN_IN,
      }),
      schemes: feeSchemes,
      facilitator,
    });
  let gate: TollboothMiddleware = compile(prices.nextblock ?? '$0.01');
  const discovery: Discovery = createDiscovery({
    table: () => gate.gate.routes,
    facilitatorUrl: FEE_FACILITATOR_URL,
    openapi: { freeRoutes: [FEE_PREVIEW_ROUTE] },
  });

  const app = express();
  app.use((req, res, next) => {
    const answer = discovery.respond({
      method: req.method,
      url: req.originalUrl,
      header: (name) => req.get(name),
    });
    if (!answer) return next();
    res.status(answer.status).set(answer.headers).end(Buffer.from(answer.body));
  });
  app.use((req, res, next) => gate(req, res, next));
  app.get('/api/v1/fees/preview', (_req, res) => {
    res.json({ data: {}, meta: {} });
  });
  app.all('/{*rest}', (_req, res) => {
    res.json({ paid: true });
  });
  return {
    app,
    discovery,
    gate: () => gate,
    setPrice(nextblock: string) {
      gate = compile(nextblock);
    },
  };
}

const concretePath = (resource: string) =>
  new URL(resource.replace(/\{(\w+)\}/g, (_m, name: string) => EXAMPLES[name] ?? 'x')).pathname;

function decodeChallenge(header: string | undefined): PaymentRequired {
  expect(header).toBeDefined();
  return decodeHeaderJson(header!) as PaymentRequired;
}

describe('discovery beside the Express gate', () => {
  let service: ReturnType<typeof buildApp>;
  beforeEach(() => {
    service = buildApp();
  });

  it('answers 402 unpaid on every listed resource, with the listing’s own requirements', async () => {
    const listing = (await supertest(service.app).get('/discovery/resources').expect(200)).body;
    expect(listing.pagination.total).toBe(10);
    for (const item of listing.items as CatalogItem[]) {
      const path = concretePath(item.resource);
      const method = item.discoveryInfo.input.method.toLowerCase() as 'get' | 'post';
      const response = await supertest(service.app)[method](path).set('host', 'fees.example.com');
      expect(response.status, `${method} ${path}`).toBe(402);
      const challenge = decodeChallenge(response.headers['payment-required']);
      // The header carries the bazaar extension in its header form; the body carries it whole.
      const { extensions: headerExtensions, ...headerRest } = challenge;
      const { extensions: bodyExtensions, ...bodyRest } = response.body as PaymentRequired;
      expect(bodyRest).toEqual(headerRest);
      expect(bodyExtensions?.bazaar).toEqual(item.extensions.bazaar);
      expect(headerExtensions?.bazaar).toEqual(toHeaderBazaarExtension(item.extensions.bazaar));
      const { maxAmountRequired: _m, outputSchema: _o, extra, ...core } = item.accepts[0]!;
      const { facilitatorUrl: _f, ...tokenExtra } = extra;
      expect(challenge.accepts).toEqual([{ ...core, extra: tokenExtra }]);
      expect(challenge.resource.url).toBe(`${FEE_BASE_URL}${path}`);
    }
  });

  it('answers 402 unpaid on every resource of the well-known document', async () => {
    const doc = (await supertest(service.app).get('/.well-known/x402').expect(200)).body;
    expect(doc.resources).toHaveLength(10);
    const methods = new Map<string, string>(
      ((await supertest(service.app).get('/discovery/resources')).body.items as CatalogItem[]).map((i) => [
        i.resource,
        i.discoveryInfo.input.method,
      ]),
    );
    for (const resource of doc.resources as string[]) {
      const method = (methods.get(resource) ?? 'GET').toLowerCase() as 'get' | 'post';
      const response = await supertest(service.app)[method](concretePath(resource));
      expect(response.status, resource).toBe(402);
    }
  });

  it('charges the price pattern of a path with no listed resource, and serves the paused decision as 503', async () => {
    const analyst = await supertest(service.app).get('/api/v1/analyst/report');
    expect(analyst.status).toBe(402);
    expect(decodeChallenge(analyst.headers['payment-required']).accepts[0]!.amount).toBe('50000');
    const doc = (await supertest(service.app).get('/.well-known/x402')).body;
    expect(
      doc.paidEndpoints.find((e: { pattern: string }) => e.pattern === '/api/v1/analyst*').priceUsd,
    ).toBe('0.05');

    const decision = await supertest(service.app).get('/api/v1/fees/now');
    expect(decision.status).toBe(503);
    expect(decision.headers['payment-required']).toBeUndefined();
    // The free preview beside the paused decision is still served free, by its own handler.
    const preview = await supertest(service.app).get('/api/v1/fees/preview');
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({ data: {}, meta: {} });
    expect(preview.headers['payment-required']).toBeUndefined();
  });

  it('echoes a challenge’s bazaar extension into a form the official extractDiscoveryInfo accepts', async () => {
    const response = await supertest(service.app).get(`/api/v1/ai/explain/transaction/${EXAMPLES.txid}`);
    const challenge = decodeChallenge(response.headers['payment-required']);
    const payload = {
      x402Version: 2,
      resource: challenge.resource,
      accepted: challenge.accepts[0],
      payload: {},
      extensions: challenge.extensions,
    };
    const found = extractDiscoveryInfo(payload as never, challenge.accepts[0] as never);
    expect(found).toMatchObject({
      resourceUrl: `${FEE_BASE_URL}/api/v1/ai/explain/transaction/:txid`,
      method: 'GET',
      routeTemplate: '/api/v1/ai/explain/transaction/:txid',
    });
  });

  it('changes the challenge, the listing, the well-known document and OpenAPI together when a price changes', async () => {
    const agent = supertest(service.app);
    const before = await agent.get('/.well-known/x402');
    const priceOf = async () => {
      const challenge = decodeChallenge(
        (await agent.get('/api/v1/mining/nextblock')).headers['payment-required'],
      );
      const listing = (await agent.get('/discovery/resources')).body.items.find((i: CatalogItem) =>
        i.resource.endsWith('/api/v1/mining/nextblock'),
      );
      const wellKnown = (await agent.get('/.well-known/x402')).body.paidEndpoints.find(
        (e: { pattern: string }) => e.pattern === '/api/v1/mining/nextblock',
      );
      const openapi = (await agent.get('/api/openapi.json')).body.paths['/api/v1/mining/nextblock'].get[
        'x-payment-info'
      ];
      return {
        challenge: challenge.accepts[0]!.amount,
        listing: [listing.accepts[0].amount, listing.accepts[0].maxAmountRequired, listing.metadata.priceUsd],
        wellKnown: wellKnown.priceUsd,
        openapi: [openapi.accepts[0].amount, openapi.priceUsd],
      };
    };
    expect(await priceOf()).toEqual({
      challenge: '10000',
      listing: ['10000', '10000', '0.01'],
      wellKnown: '0.01',
      openapi: ['10000', '0.01'],
    });

    service.setPrice('$0.02');
    expect(await priceOf()).toEqual({
      challenge: '20000',
      listing: ['20000', '20000', '0.02'],
      wellKnown: '0.02',
      openapi: ['20000', '0.02'],
    });
    const after = await agent.get('/.well-known/x402');
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('leaves a paused resource out of every document while the gate answers it 503', async () => {
    const agent = supertest(service.app);
    service.gate().gate.routes.setAvailability('GET /api/v1/ai/chat', 'paused');
    expect((await agent.get('/api/v1/ai/chat?q=hi')).status).toBe(503);
    expect((await agent.get('/discovery/resources')).body.pagination.total).toBe(9);
    expect((await agent.get('/.well-known/x402')).body.resources).not.toContain(
      `${FEE_BASE_URL}/api/v1/ai/chat`,
    );

    service.gate().gate.routes.setAvailability('GET /api/v1/ai/chat', 'active');
    expect((await agent.get('/api/v1/ai/chat?q=hi')).status).toBe(402);
    expect((await agent.get('/discovery/resources')).body.pagination.total).toBe(10);
  });

  it('answers bad paging with 400 and the Error body (docs/errors.md) through Express', async () => {
    const response = await supertest(service.app)
      .get('/discovery/resources?limit=0')
      .set('x-request-id', 'abc-1');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: {
        code: 'invalid_pagination',
        message: expect.stringContaining('limit'),
        request_id: 'abc-1',
        retryable: false,
      },
    });
  });
});
