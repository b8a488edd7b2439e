import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import { TollboothError } from '../errors/tollbooth-error';
import { createSimpleScheme, TEST_ASSET, TEST_PAY_TO } from '../test-support/simple-scheme';
import { compileRoutes, MEMO_SIZE, MEMO_TARGET_MAX } from './compile-routes';
import { normalizeTarget } from './normalize-path';
import type { RoutesConfig } from './types';

const network = 'eip155:8453';
const option = (price: string, maxTimeoutSeconds = 300) => ({
  network,
  payTo: TEST_PAY_TO,
  price,
  maxTimeoutSeconds,
});

const feeRoutes: RoutesConfig = {
  'GET /api/v1/fees/now': { accepts: option('$0.001', 60), canonical: true, availability: 'paused' },
  'GET /api/v1/ai/*': { accepts: option('$0.01'), description: 'AI' },
  'GET /api/v1/ai/explain/transaction/:txid': {
    accepts: option('$0.01'),
    description: 'transaction explainer',
  },
  'POST /api/v1/broadcast': { accepts: option('$0.01') },
  'GET /api/v1/fees/observatory/*': { accepts: option('$0.005') },
  'GET /api/v1/analyst*': { accepts: option('$0.05') },
};

// Compiled inside each test, not once at import: a table compiled at import would not see the
// mutants that mutation testing activates test by test (docs/testing.md).
const compileFeeRoutes = () =>
  compileRoutes(feeRoutes, { schemes: [createSimpleScheme()], baseUrl: 'https://api.example.com/' });

/** A table of routes that all cost $1, declared in the order given. */
const compilePriced = (keys: readonly string[], baseUrl?: string) =>
  compileRoutes(Object.fromEntries(keys.map((key) => [key, { accepts: option('$1') }])), {
    schemes: [createSimpleScheme()],
    ...(baseUrl === undefined ? {} : { baseUrl }),
  });

describe('compileRoutes', () => {
  it('resolves prices into requirements in the official key order', () => {
    const route = compileFeeRoutes().get('GET /api/v1/fees/now')!;
    expect(route.requirements).toHaveLength(1);
    expect(Object.keys(route.requirements[0]!)).toEqual([
      'scheme',
      'network',
      'amount',
      'asset',
      'payTo',
      'maxTimeoutSeconds',
      'extra',
    ]);
    expect(route.requirements[0]).toEqual({
      scheme: 'exact',
      network,
      amount: '1000',
      asset: TEST_ASSET,
      payTo: TEST_PAY_TO,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    });
  });

  it('describes each route for discovery', () => {
    const table = compileFeeRoutes();
    const route = table.get('GET /api/v1/ai/*')!;
    expect(route).toMatchObject({ method: 'GET', path: '/api/v1/ai/*', isPattern: true });
    expect(table.get('GET /api/v1/ai/explain/transaction/:txid')).toMatchObject({
      isPattern: false,
      params: ['txid'],
    });
    expect(route.resourceUrl()).toBe('https://api.example.com/api/v1/ai/*');
  });

  it('reports every configuration problem at once', () => {
    let error: unknown;
    try {
      compileRoutes(
        {
          FETCH: { accepts: option('$1') },
          'GET /a': { accepts: [] },
          'GET /b': { accepts: { network: 'solana:abc', payTo: 'x', price: '$1' } },
          'GET /c': { accepts: option('-1') },
          'GET /d': { accepts: option('$1'), canonical: true },
        },
        { schemes: [createSimpleScheme()] },
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TollboothError);
    const problems = (error as TollboothError).details?.['problems'] as string[];
    expect(problems).toHaveLength(5);
    expect((error as TollboothError).code).toBe('invalid_config');
  });

  it('checks networks, recipients, prices, timeouts and URLs, and lists every problem in one error', () => {
    let error: unknown;
    try {
      compileRoutes(
        {
          'GET /network': { accepts: { ...option('$1'), network: 'base' } },
          'GET /caip': { accepts: { ...option('$1'), network: 'EIP155 8453' } },
          'GET /pay-to': { accepts: { ...option('$1'), payTo: '0xYourAddress' } },
          'GET /no-pay-to': { accepts: { ...option('$1'), payTo: '' } },
          'GET /zero': { accepts: option('$0.0000001') },
          'GET /garbage': { accepts: option('one dollar') },
          'GET /missing-price': { accepts: { ...option('$1'), price: '' } },
          'GET /timeout': { accepts: option('$1', 0) },
          'GET /extra': { accepts: { ...option('$1'), extra: 'x' as never } },
          'GET /option': { accepts: ['nope' as never] },
          'GET /canonical': { accepts: option('$1'), canonical: { baseUrl: 'ftp://a.example' } },
          'GET /description': { accepts: option('$1'), description: 7 as never },
          'GET /fine': { accepts: option('$1') },
        },
        { schemes: [createSimpleScheme()], baseUrl: 'https://user:secret@api.example.com' },
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TollboothConfigError);
    const { problems, message, docsUrl } = error as TollboothConfigError;
    expect(problems).toEqual([
      'baseUrl "https://user:secret@api.example.com" must not carry credentials (use the client\'s auth headers)',
      'route "GET /network" accepts[0]: network "base" is an x402 v1 name: write it as the CAIP-2 chain id eip155:8453',
      'route "GET /caip" accepts[0]: network "EIP155 8453" is not a CAIP-2 chain id (namespace:reference, e.g. eip155:8453)',
      'route "GET /pay-to" accepts[0]: payTo is "0xYourAddress", not an address',
      'route "GET /no-pay-to" accepts[0]: payTo is required',
      'route "GET /zero" accepts[0]: price "$0.0000001" is 0 atomic units: a paid route must cost more than 0 (leave a free route out of the routes)',
      'route "GET /garbage" accepts[0]: unsupported price one dollar',
      'route "GET /missing-price" accepts[0]: price is required ("$0.001", 0.001 or { amount, asset })',
      'route "GET /timeout" accepts[0]: maxTimeoutSeconds must be a positive integer',
      'route "GET /extra" accepts[0]: extra must be an object',
      'route "GET /option" accepts[0]: must be an object { network, payTo, price }',
      'route "GET /canonical": canonical.baseUrl "ftp://a.example" is not an absolute http(s) URL',
      'route "GET /description": description must be a string',
    ]);
    expect(message).toBe(`invalid routes config:\n- ${problems.join('\n- ')}`);
    expect(docsUrl).toMatch(/\/docs\/errors\.md#invalid_config$/);
  });

  it.each([
    ['https://api.example.com', true],
    ['https://api.example.com/prefix/', true],
    ['http://127.0.0.1:3000', true],
    ['api.example.com', false],
    ['https://api.example.com?x=1', false],
    ['https://api.example.com/#top', false],
    ['ws://api.example.com', false],
  ])('takes baseUrl %s: %s', (baseUrl, valid) => {
    const compile = () =>
      compileRoutes({ 'GET /x': { accepts: option('$1') } }, { schemes: [createSimpleScheme()], baseUrl });
    if (valid) expect(compile).not.toThrow();
    else expect(compile).toThrow(TollboothConfigError);
  });
});

describe('RouteTable.match', () => {
  it.each([
    ['GET', 'https://api.example.com/api/v1/fees/now', 'GET /api/v1/fees/now'],
    ['HEAD', 'https://api.example.com/api/v1/fees/now', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/fees/now?x=1', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/fees/now/', 'GET /api/v1/fees/now'],
    ['GET', '/API/V1/Fees/NOW', 'GET /api/v1/fees/now'],
    ['GET', '//api//v1/fees/now', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/fees/./now', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/free/../fees/now', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/fees%2Fnow', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/fees%5Cnow', 'GET /api/v1/fees/now'],
    ['GET', '/api\\v1\\fees\\now', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/fees/%6Eow', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/fees/%256Eow', 'GET /api/v1/fees/now'],
    ['GET', 'https://api.example.com/http://evil.example/api/v1/fees/now', 'GET /api/v1/fees/now'],
    ['GET', 'http://evil.example/api/v1/fees/now#frag', 'GET /api/v1/fees/now'],
    ['GET', '/api/v1/ai/explain/transaction/abc', 'GET /api/v1/ai/explain/transaction/:txid'],
    ['GET', '/api/v1/ai/explain/block/1', 'GET /api/v1/ai/*'],
    ['GET', '/api/v1/ai', 'GET /api/v1/ai/*'],
    ['GET', '/api/v1/ai/chat?q=hi', 'GET /api/v1/ai/*'],
    ['POST', '/api/v1/broadcast', 'POST /api/v1/broadcast'],
    ['GET', '/api/v1/analyst/deep', 'GET /api/v1/analyst*'],
    ['GET', '/api/v1/analystics', 'GET /api/v1/analyst*'],
  ])('matches %s %s to %s', (method, url, key) => {
    expect(compileFeeRoutes().match(method, url)?.route.key).toBe(key);
  });

  it.each([
    ['GET', '/api/v1/fees/preview'],
    ['POST', '/api/v1/fees/now'],
    ['GET', '/api/v1/broadcast'],
    ['GET', '/api/v1/aix'],
    ['GET', '/api/v1/fees/now/extra'],
    ['GET', '/'],
  ])('leaves %s %s free', (method, url) => {
    expect(compileFeeRoutes().match(method, url)).toBeUndefined();
  });

  it('builds per-request resource URLs for routes with params, case preserved', () => {
    const match = compileFeeRoutes().match(
      'GET',
      'http://internal:3000/api/v1/ai/explain/transaction/AbC?x=1',
    )!;
    expect(match.params).toEqual({ txid: 'AbC' });
    expect(match.resourceUrl).toBe('https://api.example.com/api/v1/ai/explain/transaction/AbC');
  });

  it('finds a route among a thousand literal routes as a full scan would, methods and patterns included', () => {
    const many: RoutesConfig = {
      'GET /r/:id': { accepts: option('$1') },
      'POST /r/7': { accepts: option('$1') },
      '* /any': { accepts: option('$1') },
    };
    for (let i = 0; i < 1000; i++) many[`GET /r/${i}/item`] = { accepts: option('$1') };
    const big = compileRoutes(many, { schemes: [createSimpleScheme()] });
    expect(big.match('GET', '/r/999/item')?.route.key).toBe('GET /r/999/item');
    expect(big.match('HEAD', '/R/5/ITEM')?.route.key).toBe('GET /r/5/item');
    expect(big.match('POST', '/r/7')?.route.key).toBe('POST /r/7');
    expect(big.match('GET', '/r/7')?.route.key).toBe('GET /r/:id');
    expect(big.match('DELETE', '/any')?.route.key).toBe('* /any');
    expect(big.match('GET', '/r/%C3%A9')?.params).toEqual({ id: 'é' });
    expect(big.match('GET', '/r/1000/item')).toBeUndefined();
    expect(big.match('POST', '/r/1/item')).toBeUndefined();
  });

  it('leaves a method-less price pattern out of a path a more specific route serves (405, not 402)', () => {
    const priced = compileRoutes(
      {
        'POST /api/v1/ai/fees/advice': { accepts: option('$0.01') },
        'GET /api/v1/ai/explain/block/:id': { accepts: option('$0.01') },
        '/api/v1/ai/*': { accepts: option('$0.01') },
        '/any': { accepts: option('$1') },
        'GET /any': { accepts: option('$1') },
      },
      { schemes: [createSimpleScheme()] },
    );
    expect(priced.match('POST', '/api/v1/ai/fees/advice')?.route.key).toBe('POST /api/v1/ai/fees/advice');
    for (const method of ['PUT', 'GET', 'DELETE', 'PATCH']) {
      expect(priced.match(method, '/api/v1/ai/fees/advice')).toBeUndefined();
      expect(priced.match(method, '/api/v1/ai/%66ees/advice/')).toBeUndefined();
    }
    expect(priced.methodsFor('/api/v1/ai/fees/advice')).toEqual(['POST']);
    expect(priced.match('POST', '/api/v1/ai/explain/block/1')).toBeUndefined();
    expect(priced.methodsFor('/api/v1/ai/explain/block/1')).toEqual(['GET', 'HEAD']);
    // Where no more specific route stands, the pattern still prices every method.
    expect(priced.match('PUT', '/api/v1/ai/other')?.route.key).toBe('/api/v1/ai/*');
    expect(priced.methodsFor('/api/v1/ai/other')).toEqual(['*']);
    // A method-less route at the same path as a GET route keeps every other method.
    expect(priced.match('DELETE', '/any')?.route.key).toBe('/any');
    expect(priced.match('GET', '/any')?.route.key).toBe('GET /any');
  });

  it('uses the request origin when there is no baseUrl', () => {
    const local = compileRoutes({ 'GET /x': { accepts: option('$1') } }, { schemes: [createSimpleScheme()] });
    expect(local.match('GET', 'http://127.0.0.1:4000/x')?.resourceUrl).toBe('http://127.0.0.1:4000/x');
  });

  it('matches a route declared for HEAD to a HEAD request', () => {
    const table = compilePriced(['HEAD /probe', 'GET /probe']);
    expect(table.match('HEAD', '/probe')?.route.key).toBe('HEAD /probe');
    expect(table.match('GET', '/probe')?.route.key).toBe('GET /probe');
  });

  it('takes a key with spaces around it', () => {
    const table = compilePriced([' GET /padded ']);
    expect(table.match('GET', '/padded')?.route.key).toBe(' GET /padded ');
    expect(table.get(' GET /padded ')?.path).toBe('/padded');
  });

  it.each([
    ['more literal characters', ['GET /x/*', 'GET /x/y/*'], '/x/y/z', 'GET /x/y/*'],
    ['fewer wildcards', ['GET /a*/b*', 'GET /a/b*'], '/a/bc', 'GET /a/b*'],
    ['fewer params', ['GET /ab/:x/:y', 'GET /:a/c/d'], '/ab/c/d', 'GET /:a/c/d'],
    ['a method over none', ['/m/:id', 'GET /m/:id'], '/m/1', 'GET /m/:id'],
    ['the first declared, with methods', ['GET /a/:x', 'GET /:y/b'], '/a/b', 'GET /a/:x'],
    ['the first declared, in the other order', ['GET /:y/b', 'GET /a/:x'], '/a/b', 'GET /:y/b'],
    ['the first declared, without methods', ['/c/:x', '/:y/d'], '/c/d', '/c/:x'],
    ['the first declared, without methods, in the other order', ['/:y/d', '/c/:x'], '/c/d', '/:y/d'],
  ])('prefers %s', (_rule, keys, url, key) => {
    expect(compilePriced(keys).match('GET', url)?.route.key).toBe(key);
  });

  it('leaves a method-less route the other methods at its own path, with params too', () => {
    const table = compilePriced(['/p/:id', 'GET /p/:id', '/any', 'GET /any']);
    expect(table.match('DELETE', '/p/1')?.route.key).toBe('/p/:id');
    expect(table.match('GET', '/p/1')?.route.key).toBe('GET /p/:id');
    expect(table.methodsFor('/p/1')).toEqual(['GET', 'HEAD', '*']);
    expect(table.methodsFor('/any')).toEqual(['GET', 'HEAD', '*']);
  });

  it('leaves a method-less route out where the most specific route at the path serves other methods, whatever routes follow', () => {
    const table = compilePriced(['POST /p/:x', 'PUT /:a/:b', '/:a/:b']);
    // The POST route is the most specific at /p/q: the method-less route does not take GET there.
    expect(table.match('GET', '/p/q')).toBeUndefined();
    expect(table.methodsFor('/p/q')).toEqual(['POST', 'PUT']);
    // At /r/s the PUT route shares the method-less route's path: GET stays priced.
    expect(table.match('GET', '/r/s')?.route.key).toBe('/:a/:b');
    expect(table.methodsFor('/r/s')).toEqual(['PUT', '*']);
  });

  it('lists the methods of a less specific route that names its own method', () => {
    const table = compilePriced(['POST /api/v1/ai/fees/advice', 'GET /api/v1/ai/*']);
    expect(table.methodsFor('/api/v1/ai/fees/advice')).toEqual(['POST', 'GET', 'HEAD']);
    expect(table.match('GET', '/api/v1/ai/fees/advice')?.route.key).toBe('GET /api/v1/ai/*');
    expect(table.methodsFor('/free')).toEqual([]);
  });

  it.each([
    ['an ASCII path', ['POST /Docs/Intro', '/docs/intro'], '/DOCS/intro'],
    ['a non-ASCII path', ['POST /CAFÉ', '/café'], '/caf%C3%A9'],
  ])('treats paths that differ only in case as the same path (%s)', (_kind, keys, url) => {
    const table = compilePriced(keys);
    expect(table.match('GET', url)?.route.key).toBe(keys[1]);
    expect(table.match('POST', url)?.route.key).toBe(keys[0]);
    expect(table.methodsFor(url)).toEqual(['POST', '*']);
  });

  it('keeps apart paths that only a case mapping joins: ß is not SS', () => {
    const table = compilePriced(['GET /straße', 'GET /STRASSE']);
    expect(table.match('GET', '/stra%C3%9Fe')?.route.key).toBe('GET /straße');
    expect(table.match('GET', '/strasse')?.route.key).toBe('GET /STRASSE');
  });
});

describe('challenges', () => {
  it('are built once per resource and carry the same JSON in header and body', () => {
    const route = compileFeeRoutes().get('GET /api/v1/fees/now')!;
    const url = route.resourceUrl('https://api.example.com/api/v1/fees/now');
    const first = route.challenge(url);
    expect(route.challenge(url)).toBe(first);
    const json = Buffer.from(first.body).toString('utf8');
    expect(Buffer.from(first.header!, 'base64').toString('utf8')).toBe(json);
    expect(JSON.parse(json)).toEqual({
      x402Version: 2,
      error: 'payment_required',
      resource: { url: 'https://api.example.com/api/v1/fees/now', mimeType: 'application/json' },
      accepts: route.requirements,
    });
  });

  it('carry an extension whole in the body and in its header form in the header', () => {
    const big = { info: { output: 'x'.repeat(4000) }, schema: { type: 'object' } };
    const small = { info: { output: 'x' }, schema: { type: 'object' } };
    const local = compileRoutes(
      {
        'GET /x': {
          accepts: option('$1'),
          extensions: { bazaar: big, other: { kept: true } },
          headerExtensions: { bazaar: small },
        },
      },
      { schemes: [createSimpleScheme()], baseUrl: 'https://a.example' },
    );
    const challenge = local.get('GET /x')!.challenge('https://a.example/x');
    const body = JSON.parse(Buffer.from(challenge.body).toString('utf8'));
    const header = JSON.parse(Buffer.from(challenge.header!, 'base64').toString('utf8'));
    expect(body.extensions).toEqual({ bazaar: big, other: { kept: true } });
    expect(header.extensions).toEqual({ bazaar: small, other: { kept: true } });
    expect(Object.keys(header.extensions)).toEqual(['bazaar', 'other']);
    const { extensions: _b, ...bodyRest } = body;
    const { extensions: _h, ...headerRest } = header;
    expect(headerRest).toEqual(bodyRest);
    expect(challenge.header!.length).toBeLessThan(1000);
  });

  it('are kept for the 256 most recent resources of a route, the oldest built again past them', () => {
    const route = compilePriced(['GET /tx/:id'], 'https://a.example').get('GET /tx/:id')!;
    const urls = Array.from({ length: 256 }, (_, i) => `https://a.example/tx/${i}`);
    const first = urls.map((url) => route.challenge(url));
    urls.forEach((url, i) => {
      expect(route.challenge(url)).toBe(first[i]);
    });
    route.challenge('https://a.example/tx/256');
    const again = route.challenge(urls[0]!);
    expect(again).not.toBe(first[0]);
    expect(again).toEqual(first[0]);
    expect(route.challenge(urls[255]!)).toBe(first[255]);
  });

  it('are built anew for another error code, with that code', () => {
    const route = compilePriced(['GET /x'], 'https://a.example').get('GET /x')!;
    const invalid = route.challenge('https://a.example/x', 'invalid_payment');
    expect(route.challenge('https://a.example/x', 'invalid_payment')).not.toBe(invalid);
    expect(invalid.object['error']).toBe('invalid_payment');
    expect(route.challenge('https://a.example/x').object['error']).toBe('payment_required');
  });

  it('are v1 bodies without a header for a v1 route', () => {
    const v1 = compileRoutes(
      { 'GET /old': { accepts: option('$0.01'), x402Version: 1, description: 'old' } },
      { schemes: [createSimpleScheme()], baseUrl: 'https://a.example' },
    );
    const challenge = v1.get('GET /old')!.challenge('https://a.example/old');
    expect(challenge.header).toBeUndefined();
    expect(JSON.parse(Buffer.from(challenge.body).toString())).toMatchObject({
      x402Version: 1,
      error: 'payment_required',
      accepts: [
        {
          network: 'base',
          maxAmountRequired: '10000',
          resource: 'https://a.example/old',
          description: 'old',
        },
      ],
    });
  });
});

describe('availability', () => {
  it('changes at run time', () => {
    const local = compileRoutes(feeRoutes, { schemes: [createSimpleScheme()], baseUrl: 'https://a.example' });
    expect(local.get('GET /api/v1/fees/now')!.availability).toBe('paused');
    local.setAvailability('GET /api/v1/fees/now', 'active');
    expect(local.match('GET', '/api/v1/fees/now')!.route.availability).toBe('active');
    expect(() => local.setAvailability('GET /nope', 'active')).toThrow(TollboothError);
  });

  it('refuses an unknown route and an unknown availability, and keeps the route as it was', () => {
    const local = compileFeeRoutes();
    expect(() => local.setAvailability('GET /nope', 'active')).toThrow(
      expect.objectContaining({ code: 'invalid_config', message: 'no paid route "GET /nope"' }),
    );
    expect(() => local.setAvailability('GET /api/v1/fees/now', 'gone' as never)).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        message: 'availability must be one of active, paused, retired',
      }),
    );
    expect(local.get('GET /api/v1/fees/now')!.availability).toBe('paused');
  });
});

describe('resource URLs', () => {
  it('use the declared path of a route without params or wildcards, whatever the spelling of the request', () => {
    const match = compileFeeRoutes().match('GET', 'http://internal/API/V1/fees/%6Eow/')!;
    expect(match.resourceUrl).toBe('https://api.example.com/api/v1/fees/now');
  });

  it.each([
    ['a param', 'GET /tx/:id', '/TX/AbC'],
    ['a wildcard', 'GET /ai/*', '/AI/Chat/Deep'],
    ['an inner wildcard', 'GET /report*', '/REPORTS'],
  ])("use the request's path for a route with %s", (_kind, key, url) => {
    const match = compilePriced([key], 'https://api.example.com/').match('GET', url)!;
    expect(match.route.key).toBe(key);
    expect(match.resourceUrl).toBe(`https://api.example.com${url}`);
  });

  it('are the path alone for an origin-form request when there is no baseUrl', () => {
    const local = compilePriced(['GET /x']);
    expect(local.match('GET', '/x')?.resourceUrl).toBe('/x');
    expect(local.get('GET /x')!.resourceUrl()).toBe('/x');
    expect(local.get('GET /x')!.resourceUrl('https://a.example/X')).toBe('https://a.example/x');
  });

  it("drop the trailing slash of baseUrl and of a canonical rule's baseUrl", () => {
    const local = compileRoutes(
      {
        'GET /x': {
          accepts: option('$1'),
          canonical: { baseUrl: 'https://c.example/api/', allowQuery: true },
        },
        'GET /y': { accepts: option('$1'), canonical: true },
      },
      { schemes: [createSimpleScheme()], baseUrl: 'https://api.example.com/v1/' },
    );
    expect(local.baseUrl).toBe('https://api.example.com/v1');
    expect(local.get('GET /x')!.resourceUrl()).toBe('https://api.example.com/v1/x');
    expect(local.get('GET /x')!.canonical).toEqual({ baseUrl: 'https://c.example/api', allowQuery: true });
    expect(local.get('GET /y')!.canonical).toEqual({ baseUrl: 'https://api.example.com/v1' });
  });

  it('leave the table without a baseUrl when none is given', () => {
    expect(compilePriced(['GET /x'])).not.toHaveProperty('baseUrl');
  });
});

describe('path normalisation (properties)', () => {
  const segment = fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/);

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (raw) => {
        const once = normalizeTarget(raw).path;
        expect(normalizeTarget(once).path).toBe(once);
      }),
    );
  });

  it('gives the same path on the plain fast path as on the full normalisation', () => {
    const piece = fc.constantFrom('a', 'B', '.', '..', '...', '%', '%2F', '\\', '/', '//', '-', 'é');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const raw = `/${pieces.join('')}`;
        // `/x/..` forces the full normalisation and resolves back to `raw`'s own path.
        expect(normalizeTarget(raw).path).toBe(normalizeTarget(`/x/..${raw}`).path);
      }),
      { numRuns: 2000 },
    );
  });

  it('maps any encoding of a paid path to its route', () => {
    const disguise = fc.constantFrom(
      (s: string) => s,
      (s: string) => s.toUpperCase(),
      (s: string) => encodeURIComponent(s).replaceAll('%2F', '%2f'),
      (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''),
      (s: string) => `./${s}`,
    );
    const separator = fc.constantFrom('/', '//', '\\', '%2F', '%5C', '/./', '/x/../');
    const table = compileFeeRoutes();
    fc.assert(
      fc.property(
        segment,
        fc.array(fc.tuple(separator, disguise), { minLength: 5, maxLength: 5 }),
        (txid, parts) => {
          const names = ['api', 'v1', 'ai', 'explain', 'transaction'];
          const path = names.map((name, i) => `${parts[i]![0]}${parts[i]![1](name)}`).join('') + `/${txid}`;
          expect(table.match('GET', path)?.route.key).toBe('GET /api/v1/ai/explain/transaction/:txid');
        },
      ),
    );
  });
});

describe('the match memo', () => {
  it('matches a method and target once: the same answer object again, for match and methodsFor', () => {
    const table = compileFeeRoutes();
    const first = table.match('GET', '/api/v1/ai/explain/transaction/abc');
    expect(first?.params).toEqual({ txid: 'abc' });
    expect(table.match('get', '/api/v1/ai/explain/transaction/abc')).toBe(first);
    // A free target is kept too, as a miss.
    expect(table.match('GET', '/free')).toBeUndefined();
    expect(table.match('GET', '/free')).toBeUndefined();
    expect(table.methodsFor('/api/v1/broadcast')).toEqual(['POST']);
    const methods = table.methodsFor('/api/v1/broadcast');
    methods.push('PUT');
    expect(table.methodsFor('/api/v1/broadcast')).toEqual(['POST']);
  });

  it('keeps each target apart: query, origin and raw path stay those of the request', () => {
    const table = compileFeeRoutes();
    const plain = table.match('GET', 'https://api.example.com/api/v1/fees/now');
    const query = table.match('GET', 'https://api.example.com/api/v1/fees/now?x=1');
    const other = table.match('GET', 'http://evil.example/api/v1/fees/now');
    const encoded = table.match('GET', 'https://api.example.com/api/v1/fees/%6Eow');
    expect(plain?.target.query).toBeUndefined();
    expect(query?.target.query).toBe('x=1');
    expect(other?.target.origin).toBe('http://evil.example');
    expect(encoded?.target.rawPath).toBe('/api/v1/fees/%6Eow');
    expect(table.match('GET', 'https://api.example.com/api/v1/fees/now')).toBe(plain);
    expect(table.match('POST', 'https://api.example.com/api/v1/fees/now')).toBeUndefined();
  });

  it('reads availability from the route, so a change after the first match is seen', () => {
    const table = compileFeeRoutes();
    expect(table.match('GET', '/api/v1/fees/now')?.route.availability).toBe('paused');
    table.setAvailability('GET /api/v1/fees/now', 'active');
    expect(table.match('GET', '/api/v1/fees/now')?.route.availability).toBe('active');
  });

  it('hands out a kept match frozen, so no caller can change what the next request gets', () => {
    const table = compileFeeRoutes();
    const match = table.match('GET', '/api/v1/ai/explain/transaction/abc')!;
    expect(Object.isFrozen(match) && Object.isFrozen(match.params) && Object.isFrozen(match.target)).toBe(
      true,
    );
    expect(() => {
      (match.params as Record<string, string>)['txid'] = 'other';
    }).toThrow(TypeError);
  });

  it('is bounded: the oldest target is dropped once MEMO_SIZE are kept, and long targets are never kept', () => {
    const table = compileFeeRoutes();
    const first = table.match('GET', '/api/v1/ai/explain/transaction/0');
    for (let i = 1; i < MEMO_SIZE; i++) table.match('GET', `/api/v1/ai/explain/transaction/${i}`);
    expect(table.match('GET', '/api/v1/ai/explain/transaction/0')).toBe(first);
    table.match('HEAD', `/api/v1/ai/explain/transaction/${MEMO_SIZE}`);
    const again = table.match('GET', '/api/v1/ai/explain/transaction/0');
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    const long = `/api/v1/ai/explain/transaction/${'a'.repeat(MEMO_TARGET_MAX)}`;
    const once = table.match('GET', long);
    expect(once?.params['txid']).toHaveLength(MEMO_TARGET_MAX);
    expect(table.match('GET', long)).not.toBe(once);
  });
});
