import { Validator } from '@seriousme/openapi-schema-validator';
import { decodeHeaderJson, type PaymentRequired } from '@tollbooth/core';
import {
  type CatalogItem,
  createBazaarExtension,
  createDiscovery,
  type Discovery,
  type DiscoveryResponse,
  toHeaderBazaarExtension,
} from '@tollbooth/core/discovery';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import {
  extractDiscoveryInfo,
  extractDiscoveryInfoV1,
  validateDiscoveryExtension,
} from '@x402/extensions/bazaar';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeEach, describe, expect, it } from 'vitest';
import { FEE_PREVIEW_ROUTE, FEE_SERVICE_PAY_TO, SEED_RESOURCES } from './support/discovery-fee-routes';
import { BASE_USDC, buildFeeTable, FEE_BASE_URL, FEE_FACILITATOR_URL } from './support/discovery-fixture';
import { CATALOG_LISTING_SCHEMA, ERROR_BODY_SCHEMA, WELL_KNOWN_SCHEMA } from './support/discovery-schemas';

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validateListing = ajv.compile(CATALOG_LISTING_SCHEMA);
const validateWellKnown = ajv.compile(WELL_KNOWN_SCHEMA);
const validateError = ajv.compile(ERROR_BODY_SCHEMA);

const decoder = new TextDecoder();
// biome-ignore lint/suspicious/noExplicitAny: the documents are parsed JSON, inspected loosely here
const json = (response: DiscoveryResponse | undefined): any => {
  if (!response) throw new Error('no response');
  return JSON.parse(decoder.decode(response.body));
};

function setup() {
  const table = buildFeeTable();
  const discovery = createDiscovery({
    table,
    facilitatorUrl: FEE_FACILITATOR_URL,
    now: () => new Date('2026-08-06T12:00:00.000Z'),
    openapi: { title: 'Bitcoin fee data service', freeRoutes: [FEE_PREVIEW_ROUTE] },
  });
  return { table, discovery };
}

const get = (discovery: Discovery, url: string, headers: Record<string, string> = {}) =>
  discovery.respond({ method: 'GET', url, header: (name) => headers[name.toLowerCase()] });

describe('catalog listing (docs/fee-service-contract.md#catalog-listing)', () => {
  let discovery: Discovery;
  beforeEach(() => {
    ({ discovery } = setup());
  });

  it('lists the ten active resources of the production profile with limit 100, offset 0, total 10', () => {
    const response = get(discovery, '/discovery/resources');
    expect(response?.status).toBe(200);
    expect(response?.headers['content-type']).toBe('application/json; charset=utf-8');
    const listing = json(response);
    expect(validateListing(listing), JSON.stringify(validateListing.errors)).toBe(true);
    expect(listing.x402Version).toBe(2);
    expect(listing.pagination).toEqual({ limit: 100, offset: 0, total: 10 });
    expect(listing.items.map((item: CatalogItem) => item.resource)).toEqual(
      SEED_RESOURCES.map(([, path]) => `${FEE_BASE_URL}${path}`),
    );
  });

  it('leaves out the paused timing decision and every price pattern', () => {
    const resources: string[] = json(get(discovery, '/discovery/resources')).items.map(
      (i: CatalogItem) => i.resource,
    );
    expect(resources.some((url) => url.endsWith('/api/v1/fees/now'))).toBe(false);
    expect(resources.some((url) => url.includes('*') || url.includes('analyst'))).toBe(false);
  });

  it.each(SEED_RESOURCES)(
    'describes %s %s with its amount, priceUsd and category',
    (method, path, amount, usd, category) => {
      const item: CatalogItem = json(get(discovery, '/discovery/resources')).items.find(
        (i: CatalogItem) => i.resource === `${FEE_BASE_URL}${path}`,
      );
      expect(item.type).toBe('http');
      expect(item.x402Version).toBe(2);
      expect(item.mimeType).toBe('application/json');
      expect(item.description.length).toBeGreaterThan(0);
      expect(item.lastUpdated).toBe('2026-08-06T12:00:00.000Z');
      expect(item.accepts).toHaveLength(1);
      const [accept] = item.accepts;
      expect(accept).toMatchObject({
        scheme: 'exact',
        network: 'eip155:8453',
        amount,
        maxAmountRequired: amount,
        asset: BASE_USDC,
        payTo: FEE_SERVICE_PAY_TO,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2', facilitatorUrl: FEE_FACILITATOR_URL },
      });
      expect(accept?.outputSchema.input).toEqual({ ...item.discoveryInfo.input, discoverable: true });
      expect(accept?.outputSchema.output).toEqual(item.discoveryInfo.output.schema);
      expect(item.discoveryInfo.input).toMatchObject({ type: 'http', method, resource: item.resource });
      expect(item.discoveryInfo.output.mimeType).toBe('application/json');
      expect(item.metadata).toMatchObject({
        category,
        priceUsd: usd,
        network: 'eip155:8453',
        extensions: ['bazaar'],
        description: item.description,
        input: item.discoveryInfo.input,
        output: item.discoveryInfo.output,
      });
      expect(item.metadata.keywords.length).toBeGreaterThan(0);
    },
  );

  it('gives each requirement a v1 outputSchema that the official v1 extractor reads', () => {
    const items: CatalogItem[] = json(get(discovery, '/discovery/resources')).items;
    for (const item of items) {
      const { amount: _a, ...accept } = item.accepts[0]!;
      const v1 = {
        ...accept,
        network: 'base',
        resource: item.resource,
        description: item.description,
        mimeType: item.mimeType,
      };
      const info = extractDiscoveryInfoV1(v1 as never);
      expect(info, item.resource).not.toBeNull();
      expect(info!.input).toMatchObject({ type: 'http', method: item.discoveryInfo.input.method });
    }
    const broadcast = items.find((i) => i.resource.endsWith('/api/v1/broadcast'))!;
    const { amount: _a, ...accept } = broadcast.accepts[0]!;
    expect(extractDiscoveryInfoV1({ ...accept, resource: broadcast.resource } as never)!.input).toMatchObject(
      {
        bodyType: 'json',
        body: { hex: { type: 'string', description: 'Signed raw transaction hex', required: true } },
      },
    );
  });

  it('shows a path parameter as a URI template with a pathParams descriptor', () => {
    const item: CatalogItem = json(get(discovery, '/discovery/resources')).items[0];
    expect(item.resource).toBe(`${FEE_BASE_URL}/api/v1/ai/explain/transaction/{txid}`);
    expect(item.discoveryInfo.input.pathParams).toEqual({
      txid: { type: 'string', description: 'Transaction id (64 hex characters)', required: true },
    });
    expect(item.discoveryInfo.input.queryParams).toBeUndefined();
    expect(item.discoveryInfo.input.bodyFields).toBeUndefined();
  });

  it('describes query parameters and body fields with their required flags', () => {
    const items: CatalogItem[] = json(get(discovery, '/discovery/resources')).items;
    const byPath = (path: string) => items.find((i) => i.resource === `${FEE_BASE_URL}${path}`)!;
    expect(byPath('/api/v1/ai/chat').discoveryInfo.input.queryParams).toEqual({
      q: { type: 'string', description: 'The question (1 to 500 characters)', required: true },
    });
    expect(byPath('/api/v1/ai/fees/advice').discoveryInfo.input.queryParams).toEqual({
      urgency: { type: 'string', description: 'How soon the transaction should confirm', required: false },
      amount_btc: { type: 'number', description: 'Amount to send, in BTC', required: false },
      context: { type: 'string', description: 'Free-text context for the advice', required: false },
    });
    const broadcast = byPath('/api/v1/broadcast').discoveryInfo.input;
    expect(broadcast.method).toBe('POST');
    expect(broadcast.bodyFields).toEqual({
      hex: { type: 'string', description: 'Signed raw transaction hex', required: true },
      allow_high_fee: {
        type: 'boolean',
        description: 'Broadcast even when the fee rate is above the absurd-fee limit',
        required: false,
      },
    });
    const nextblock = byPath('/api/v1/mining/nextblock').discoveryInfo.input;
    expect(Object.keys(nextblock).sort()).toEqual(['method', 'resource', 'type']);
  });

  it.each([
    ['limit=3', { limit: 3, offset: 0 }, 3, 0],
    ['limit=3&offset=3', { limit: 3, offset: 3 }, 3, 3],
    ['limit=4&offset=8', { limit: 4, offset: 8 }, 2, 8],
    ['offset=10', { limit: 100, offset: 10 }, 0, 10],
    ['offset=25', { limit: 100, offset: 25 }, 0, 25],
    ['limit=1000', { limit: 1000, offset: 0 }, 10, 0],
    ['limit=1', { limit: 1, offset: 0 }, 1, 0],
  ])('pages with %s', (query, pagination, count, firstIndex) => {
    const all: CatalogItem[] = json(get(discovery, '/discovery/resources')).items;
    const listing = json(get(discovery, `/discovery/resources?${query}`));
    expect(validateListing(listing)).toBe(true);
    expect(listing.pagination).toEqual({ ...pagination, total: 10 });
    expect(listing.items).toHaveLength(count);
    if (count > 0) expect(listing.items[0].resource).toBe(all[firstIndex]!.resource);
  });

  it.each([
    'limit=0',
    'limit=1001',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'limit=1e2',
    'limit=',
    'limit=%2B5',
    'limit=%205',
    'offset=-1',
    'offset=0.5',
    'offset=x',
    'offset=99999999999999999999',
    'limit=5&limit=6',
    'offset=1&offset=2',
  ])('answers 400 with an Error body for %s', (query) => {
    const response = get(discovery, `/discovery/resources?${query}`, { 'x-request-id': 'req-42' });
    expect(response?.status).toBe(400);
    const body = json(response);
    expect(validateError(body), JSON.stringify(validateError.errors)).toBe(true);
    expect(body.error).toMatchObject({ code: 'invalid_pagination', request_id: 'req-42', retryable: false });
    expect(response?.headers['cache-control']).toBe('no-store');
  });

  it('reports a bad limit and a bad offset together', () => {
    const body = json(get(discovery, '/discovery/resources?limit=0&offset=-3'));
    expect(body.error.message).toContain('limit');
    expect(body.error.message).toContain('offset');
  });

  it('filters by type, network and payTo', () => {
    const count = (query: string) => json(get(discovery, `/discovery/resources?${query}`)).pagination.total;
    expect(count('type=http')).toBe(10);
    expect(count('type=mcp')).toBe(0);
    expect(count('network=eip155:8453')).toBe(10);
    expect(count('network=eip155:84532')).toBe(0);
    expect(count(`payTo=${FEE_SERVICE_PAY_TO.toLowerCase()}`)).toBe(10);
    expect(count('payTo=0x0000000000000000000000000000000000000001')).toBe(0);
  });
});

describe('payment discovery document (docs/fee-service-contract.md#payment-discovery-document)', () => {
  it('has every field of the contract', () => {
    const { discovery } = setup();
    const response = get(discovery, '/.well-known/x402');
    expect(response?.status).toBe(200);
    const doc = json(response);
    expect(validateWellKnown(doc), JSON.stringify(validateWellKnown.errors)).toBe(true);
    expect(doc).toMatchObject({
      x402: true,
      x402Version: 2,
      protocol: 'https://x402.org',
      scheme: 'exact',
      network: 'eip155:8453',
      asset: BASE_USDC,
      payTo: FEE_SERVICE_PAY_TO,
      seller: {
        origin: FEE_BASE_URL,
        wellKnown: `${FEE_BASE_URL}/.well-known/x402`,
        openapi: `${FEE_BASE_URL}/api/openapi.json`,
      },
      facilitator: { url: FEE_FACILITATOR_URL },
      headers: {
        paymentRequired: 'PAYMENT-REQUIRED',
        paymentSignature: 'PAYMENT-SIGNATURE',
        paymentResponse: 'PAYMENT-RESPONSE',
      },
      legacy: { paymentHeader: 'X-PAYMENT', accepted: true },
    });
    expect(doc.freeEndpoints).toMatch(/free/i);
    expect(doc.tryIt).toBe(`curl -i ${FEE_BASE_URL}/api/v1/mining/nextblock`);
  });

  it('lists the ten paid resource URLs, never a pattern', () => {
    const { discovery } = setup();
    const doc = json(get(discovery, '/.well-known/x402'));
    expect(doc.resources).toEqual(SEED_RESOURCES.map(([, path]) => `${FEE_BASE_URL}${path}`));
  });

  it('builds paidEndpoints from the price patterns and the exact paid paths', () => {
    const { discovery } = setup();
    const doc = json(get(discovery, '/.well-known/x402'));
    const url = (path: string) => `${FEE_BASE_URL}${path}`;
    expect(doc.paidEndpoints).toEqual([
      {
        pattern: '/api/v1/broadcast',
        method: 'POST',
        priceUsd: '0.01',
        description: 'Broadcast of a signed transaction',
        resources: [url('/api/v1/broadcast')],
      },
      {
        pattern: '/api/v1/mining/nextblock',
        method: 'GET',
        priceUsd: '0.01',
        description: 'Next block prediction with fee analysis',
        resources: [url('/api/v1/mining/nextblock')],
      },
      {
        pattern: '/api/v1/fees/landscape',
        method: 'GET',
        priceUsd: '0.005',
        description: 'Complete fee landscape analysis',
        resources: [url('/api/v1/fees/landscape')],
      },
      {
        pattern: '/api/v1/ai/*',
        method: '*',
        priceUsd: '0.01',
        description: 'AI explainers and advice',
        resources: SEED_RESOURCES.slice(0, 4).map(([, path]) => url(path)),
      },
      {
        pattern: '/api/v1/fees/observatory/*',
        method: '*',
        priceUsd: '0.005',
        description: 'Fee observatory analytics',
        resources: SEED_RESOURCES.slice(6, 9).map(([, path]) => url(path)),
      },
      {
        pattern: '/api/v1/analyst*',
        method: '*',
        priceUsd: '0.05',
        description: 'Multi-step AI analyst',
        resources: [],
      },
    ]);
  });
});

describe('OpenAPI 3.1.0 (docs/fee-service-contract.md#versioning)', () => {
  it('passes an independent OpenAPI 3.1 validator', async () => {
    const { discovery } = setup();
    const doc = json(get(discovery, '/api/openapi.json'));
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes every paid route with its operationId, parameters, payment terms and error responses', () => {
    const { discovery, table } = setup();
    const doc = json(get(discovery, '/api/openapi.json'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('pre-release');
    expect(doc.servers).toEqual([{ url: FEE_BASE_URL }]);
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        ...SEED_RESOURCES.map(([, path]) => path),
        '/api/v1/fees/now',
        '/api/v1/fees/preview',
        // Sold under its price pattern and described here, but listed in no catalog.
        '/api/v1/analyst',
      ].sort(),
    );
    const decision = doc.paths['/api/v1/fees/now'].get;
    expect(decision.operationId).toBe('getFeeTimingDecision');
    expect(decision['x-payment-info']).toMatchObject({
      x402Version: 2,
      availability: 'paused',
      priceUsd: '0.001',
      accepts: [{ amount: '1000', maxTimeoutSeconds: 60 }],
      // The fee service names every paid route's payments (docs/fee-service.md#payment-identifiers).
      paymentIdentifier: { required: false },
    });
    expect(Object.keys(decision.responses).sort()).toEqual(['200', '400', '402', '502', '503']);
    expect(
      decision.responses['200'].content['application/json'].schema.properties.data.properties.decision,
    ).toMatchObject({ type: 'string', enum: ['send', 'wait'] });

    const tx = doc.paths['/api/v1/ai/explain/transaction/{txid}'].get;
    expect(tx.parameters).toEqual([
      {
        name: 'txid',
        in: 'path',
        required: true,
        description: 'Transaction id (64 hex characters)',
        schema: expect.objectContaining({ type: 'string', pattern: '^[0-9a-fA-F]{64}$' }),
      },
    ]);
    expect(tx['x-payment-info'].accepts).toEqual(
      table.get('GET /api/v1/ai/explain/transaction/:txid')!.requirements.map((r) => ({ ...r })),
    );
    const chat = doc.paths['/api/v1/ai/chat'].get;
    expect(chat.parameters).toEqual([
      expect.objectContaining({
        name: 'q',
        in: 'query',
        required: true,
        description: 'The question (1 to 500 characters)',
      }),
    ]);
    const broadcast = doc.paths['/api/v1/broadcast'].post;
    expect(broadcast.requestBody.content['application/json'].schema.required).toEqual(['hex']);
    expect(broadcast.security).toEqual([{ x402: [] }]);

    const preview = doc.paths['/api/v1/fees/preview'].get;
    expect(preview.security).toEqual([]);
    expect(preview['x-payment-info']).toBeUndefined();
    expect(Object.keys(preview.responses).sort()).toEqual(['200', '503']);
  });

  it('derives the 402 body from the PaymentRequired wire schema and the errors from the contract Error body', () => {
    const { discovery, table } = setup();
    const doc = json(get(discovery, '/api/openapi.json'));
    const paymentRequired = ajv.compile(doc.components.schemas.PaymentRequired);
    const challenge = table.get('GET /api/v1/ai/chat')!.challenge(`${FEE_BASE_URL}/api/v1/ai/chat`).object;
    expect(paymentRequired(challenge)).toBe(true);
    expect(paymentRequired({ ...challenge, accepts: [] })).toBe(false);
    const error = ajv.compile(doc.components.schemas.Error);
    expect(error({ error: { code: 'x', message: 'y', request_id: 'z', retryable: true } })).toBe(true);
    expect(error({ error: { code: 'x', message: 'y', retryable: true } })).toBe(false);
    expect(doc.components.responses.PaymentRequired.headers['PAYMENT-REQUIRED']).toBeDefined();
  });
});

describe('bazaar extension', () => {
  const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

  /**
   * The challenge a route sends in its header, which clients read and echo: addBazaarExtensions
   * put the route's bazaar extension in the body whole and in the header in its header form.
   */
  function challengeOf(key: string, url: string): PaymentRequired {
    const route = buildFeeTable().get(key)!;
    const challenge = route.challenge(url);
    const full = createBazaarExtension(route);
    expect((challenge.object as PaymentRequired).extensions?.bazaar).toEqual(full);
    const header = decodeHeaderJson(challenge.header!) as PaymentRequired;
    expect(header.extensions?.bazaar).toEqual(toHeaderBazaarExtension(full));
    return header;
  }

  it.each(SEED_RESOURCES.map(([method, path]) => [method, path] as const))(
    'is echoed by the official client and accepted by extractDiscoveryInfo for %s %s',
    async (method, path) => {
      const key = `${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
      const concrete = path
        .replace('{txid}', '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b')
        .replace('{hash_or_height}', '170000');
      const paymentRequired = challengeOf(key, `${FEE_BASE_URL}${concrete}`);
      expect(validateDiscoveryExtension(paymentRequired.extensions!.bazaar as never)).toEqual({
        valid: true,
      });

      const client = new x402Client();
      registerExactEvmScheme(client, { signer: account });
      const payload = await client.createPaymentPayload(paymentRequired as never);
      expect(payload.extensions?.bazaar).toEqual(paymentRequired.extensions!.bazaar);

      const found = extractDiscoveryInfo(payload, paymentRequired.accepts[0] as never);
      expect(found).not.toBeNull();
      expect(found).toMatchObject({ x402Version: 2, method });
      const template = path.replace(/\{(\w+)\}/g, ':$1');
      expect((found as { resourceUrl: string }).resourceUrl).toBe(`${FEE_BASE_URL}${template}`);
    },
  );

  it('carries example inputs that satisfy its own schema', () => {
    const table = buildFeeTable();
    const chat = createBazaarExtension(table.get('GET /api/v1/ai/chat')!);
    expect(chat.info.input).toEqual({
      type: 'http',
      method: 'GET',
      queryParams: { q: 'Why are fees high today?' },
    });
    const broadcast = createBazaarExtension(table.get('POST /api/v1/broadcast')!);
    expect(broadcast.info.input).toEqual({
      type: 'http',
      method: 'POST',
      bodyType: 'json',
      body: { hex: '0200000001' },
    });
    const tx = createBazaarExtension(table.get('GET /api/v1/ai/explain/transaction/:txid')!, {
      pathParams: { txid: 'ab'.repeat(32) },
    });
    expect(tx.routeTemplate).toBe('/api/v1/ai/explain/transaction/:txid');
    expect(tx.info.input.pathParams).toEqual({ txid: 'ab'.repeat(32) });
    expect(validateDiscoveryExtension(tx as never)).toEqual({ valid: true });
    const badTx = createBazaarExtension(table.get('GET /api/v1/ai/explain/transaction/:txid')!, {
      pathParams: { txid: 'not-a-txid' },
    });
    expect(validateDiscoveryExtension(badTx as never).valid).toBe(false);
  });
});

describe('discovery responder', () => {
  it('answers HEAD with the headers of GET and no body', () => {
    const { discovery } = setup();
    const getResponse = get(discovery, '/.well-known/x402')!;
    const head = discovery.respond({ method: 'HEAD', url: `${FEE_BASE_URL}/.well-known/x402` })!;
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(getResponse.body.length));
    expect(head.headers.etag).toBe(getResponse.headers.etag);
  });

  it('answers 304 to a matching If-None-Match', () => {
    const { discovery } = setup();
    const first = get(discovery, '/api/openapi.json')!;
    const again = get(discovery, '/api/openapi.json', { 'if-none-match': first.headers.etag! })!;
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(get(discovery, '/api/openapi.json', { 'if-none-match': '"other"' })!.status).toBe(200);
  });

  it('passes other paths and OPTIONS through and answers 405 to other methods', () => {
    const { discovery } = setup();
    expect(get(discovery, '/api/v1/fees/preview')).toBeUndefined();
    expect(get(discovery, '/discovery/resources/extra')).toBeUndefined();
    expect(discovery.respond({ method: 'OPTIONS', url: '/.well-known/x402' })).toBeUndefined();
    const post = discovery.respond({ method: 'POST', url: '/discovery/resources' })!;
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(validateError(json(post))).toBe(true);
  });

  it('serves configured paths', () => {
    const table = buildFeeTable();
    const discovery = createDiscovery({
      table,
      facilitatorUrl: FEE_FACILITATOR_URL,
      paths: { catalog: '/x402/resources', openapi: '/openapi.json' },
    });
    expect(get(discovery, '/x402/resources')?.status).toBe(200);
    expect(get(discovery, '/discovery/resources')).toBeUndefined();
    expect(json(get(discovery, '/.well-known/x402')).seller.openapi).toBe(`${FEE_BASE_URL}/openapi.json`);
  });

  it('rebuilds the listing, the well-known document and OpenAPI when a route is paused or resumed', () => {
    const { discovery, table } = setup();
    const before = get(discovery, '/.well-known/x402')!;
    table.setAvailability('GET /api/v1/mining/nextblock', 'paused');
    expect(json(get(discovery, '/discovery/resources')).pagination.total).toBe(9);
    const paused = get(discovery, '/.well-known/x402')!;
    expect(paused.headers.etag).not.toBe(before.headers.etag);
    expect(json(paused).resources).not.toContain(`${FEE_BASE_URL}/api/v1/mining/nextblock`);
    expect(
      json(get(discovery, '/api/openapi.json')).paths['/api/v1/mining/nextblock'].get['x-payment-info']
        .availability,
    ).toBe('paused');

    table.setAvailability('GET /api/v1/fees/now', 'active');
    table.setAvailability('GET /api/v1/mining/nextblock', 'active');
    const listing = json(get(discovery, '/discovery/resources'));
    expect(listing.pagination.total).toBe(11);
    const decision = listing.items.find((i: CatalogItem) => i.resource === `${FEE_BASE_URL}/api/v1/fees/now`);
    expect(decision.accepts[0]).toMatchObject({ amount: '1000', maxTimeoutSeconds: 60 });
    expect(decision.metadata.priceUsd).toBe('0.001');
  });

  it('follows a recompiled table when given a function returning the current one', () => {
    let table = buildFeeTable();
    const discovery = createDiscovery({ table: () => table, facilitatorUrl: FEE_FACILITATOR_URL });
    expect(json(get(discovery, '/discovery/resources?limit=1')).items[0].accepts[0].amount).toBe('10000');
    table = buildFeeTable({ decisionAvailability: 'retired' });
    const doc = json(get(discovery, '/api/openapi.json'));
    expect(doc.paths['/api/v1/fees/now'].get.deprecated).toBe(true);
    expect(doc.paths['/api/v1/fees/now'].get.responses['410']).toBeDefined();
  });
});
