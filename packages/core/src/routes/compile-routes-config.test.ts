import { describe, expect, it } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import { PAYMENT_IDENTIFIER_JSON_SCHEMA } from '../protocol/payment-identifier';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { type CompileRoutesOptions, compileRoutes } from './compile-routes';
import type { RouteConfig, RoutesConfig } from './types';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' };

/** The problems compileRoutes lists for a config, or `[]` when it compiles. */
function problemsOf(config: RoutesConfig, options: Partial<CompileRoutesOptions> = {}): readonly string[] {
  try {
    compileRoutes(config, { schemes: [createSimpleScheme()], ...options });
  } catch (error) {
    if (error instanceof TollboothConfigError) return error.problems;
    throw error;
  }
  return [];
}

/** The one route `GET /x` compiled with these settings. */
function routeWith(settings: Partial<RouteConfig>, baseUrl = 'https://api.example.com') {
  return compileRoutes(
    { 'GET /x': { accepts, ...settings } },
    { schemes: [createSimpleScheme()], baseUrl },
  ).get('GET /x')!;
}

describe('compileRoutes refuses', () => {
  it.each([
    ['no scheme', []],
    ['schemes that are not a list', { scheme: 'exact' }],
  ])('%s', (_case, schemes) => {
    expect(problemsOf({ 'GET /x': { accepts } }, { schemes: schemes as never })).toEqual([
      'schemes needs at least one scheme server (e.g. createExactEvmScheme())',
      'route "GET /x" accepts[0]: no scheme server for exact on eip155:8453',
    ]);
  });

  it.each([
    ['null', null],
    ['a list', []],
    ['a number', 42],
  ])('a routes config that is %s', (_case, config) => {
    expect(problemsOf(config as never)).toEqual(['routes must be an object keyed by "METHOD /path"']);
  });

  it.each(['FETCH', 'GET api/x', 'GET /a b', 'GET  '])('the key %j', (key) => {
    expect(problemsOf({ [key]: { accepts } })).toEqual([
      `route "${key}": key must look like "GET /path" (":param" and "*" allowed)`,
    ]);
  });

  it.each([
    ['GET /a/:id.json', ':id.json'],
    ['GET /a/:', ':'],
    ['GET /a/:1st/b', ':1st'],
    ['GET /a/[id]', '[id]'],
    ['/[txid]/raw', '[txid]'],
  ])('the key %j, whose segment %j reads as a param but would match only its own text', (key, segment) => {
    expect(problemsOf({ [key]: { accepts } })).toEqual([
      `route "${key}": "${segment}" is no param (a param is a whole segment ":name" of letters, digits and _); as written it matches only its own text and the resource would be free`,
    ]);
  });

  it.each([
    ['the same spelling', 'GET /x', 'GET /x'],
    ['extra slashes', 'GET /x', 'get //x/'],
    ['another case', 'GET /Docs/:id', 'GET /docs/:ID'],
  ])('a second route at the same method and path (%s)', (_case, first, second) => {
    // Object keys are unique: the two spellings differ, or the test repeats a key with a space.
    const keys = first === second ? [first, ` ${second}`] : [first, second];
    expect(problemsOf({ [keys[0]!]: { accepts }, [keys[1]!]: { accepts } })).toEqual([
      `route "${keys[1]}": same method and path as "${keys[0]}"`,
    ]);
  });

  it('a route whose config is no object, and goes on to the next route', () => {
    expect(
      problemsOf({
        'GET /a': null as never,
        'GET /b': 5 as never,
        'GET /c': 'x' as never,
        'GET /d': { accepts },
      }),
    ).toEqual([
      'route "GET /a": config must be an object',
      'route "GET /b": config must be an object',
      'route "GET /c": config must be an object',
    ]);
  });

  it.each([
    [{ x402Version: 3 }, 'x402Version must be 1 or 2'],
    [{ availability: 'gone' }, 'availability must be one of active, paused, retired'],
    [{ settle: 'later' }, 'settle must be "after-handler" or "before-handler"'],
    [{ retryAfterSeconds: -1 }, 'retryAfterSeconds must be a non-negative integer'],
    [{ retryAfterSeconds: 1.5 }, 'retryAfterSeconds must be a non-negative integer'],
    [{ retryAfterSeconds: '60' }, 'retryAfterSeconds must be a non-negative integer'],
    [{ description: 7 }, 'description must be a string'],
    [{ mimeType: false }, 'mimeType must be a string'],
    [{ extensions: 'bazaar' }, 'extensions must be an object keyed by extension name'],
    [{ extensions: null }, 'extensions must be an object keyed by extension name'],
    [{ extensions: [{}] }, 'extensions must be an object keyed by extension name'],
    [{ headerExtensions: 5 }, 'headerExtensions must be an object keyed by extension name'],
    [{ headerExtensions: null }, 'headerExtensions must be an object keyed by extension name'],
    [{ headerExtensions: [] }, 'headerExtensions must be an object keyed by extension name'],
    [{ canonical: 'yes' }, 'canonical must be true, false or { baseUrl, allowQuery?, checkOrigin? }'],
    [{ canonical: 1 }, 'canonical must be true, false or { baseUrl, allowQuery?, checkOrigin? }'],
    [{ canonical: {} }, 'canonical.baseUrl undefined is not an absolute http(s) URL'],
    [{ paymentIdentifier: 'yes' }, 'paymentIdentifier must be true, false or { required?: boolean }'],
    [{ paymentIdentifier: null }, 'paymentIdentifier must be true, false or { required?: boolean }'],
    [{ paymentIdentifier: [true] }, 'paymentIdentifier must be true, false or { required?: boolean }'],
    [{ paymentIdentifier: { required: 'yes' } }, 'paymentIdentifier.required must be a boolean'],
    [
      { paymentIdentifier: true, x402Version: 1 },
      'paymentIdentifier is an x402 v2 extension (x402Version is 1)',
    ],
    [
      { paymentIdentifier: true, extensions: { 'payment-identifier': {} } },
      'declare payment-identifier with the paymentIdentifier option, not in extensions',
    ],
    [
      { paymentIdentifier: { required: true }, headerExtensions: { 'payment-identifier': {} } },
      'declare payment-identifier with the paymentIdentifier option, not in extensions',
    ],
    // Without the option the gate would ignore identifiers the challenge asks for.
    [
      { extensions: { 'payment-identifier': { info: { required: false } } } },
      'declare payment-identifier with the paymentIdentifier option, not in extensions',
    ],
    [
      { paymentIdentifier: false, headerExtensions: { 'payment-identifier': {} } },
      'declare payment-identifier with the paymentIdentifier option, not in extensions',
    ],
  ])('the route setting %j', (settings, problem) => {
    expect(
      problemsOf({ 'GET /x': { accepts, ...(settings as object) } }, { baseUrl: 'https://a.example' }),
    ).toEqual([`route "GET /x": ${problem}`]);
  });

  it('canonical: true without the baseUrl option', () => {
    expect(problemsOf({ 'GET /x': { accepts, canonical: true } })).toEqual([
      'route "GET /x": canonical: true needs the baseUrl option',
    ]);
  });

  it.each(['GET /x/:id', 'GET /x/*', 'GET /x*'])('a canonical rule on %s', (key) => {
    expect(problemsOf({ [key]: { accepts, canonical: true } }, { baseUrl: 'https://a.example' })).toEqual([
      `route "${key}": a canonical rule needs an exact path (no :params or *)`,
    ]);
  });
});

describe('compileRoutes takes', () => {
  it('the defaults of every optional setting', () => {
    const route = routeWith({});
    expect(route).toMatchObject({
      x402Version: 2,
      settle: 'after-handler',
      availability: 'active',
      retryAfterSeconds: 60,
      description: '',
      mimeType: 'application/json',
    });
    expect(route).not.toHaveProperty('canonical');
    expect(route).not.toHaveProperty('paymentIdentifier');
  });

  it('each setting as given', () => {
    const route = routeWith({
      x402Version: 1,
      settle: 'before-handler',
      availability: 'retired',
      retryAfterSeconds: 0,
      description: 'a report',
      mimeType: 'text/csv',
      canonical: { baseUrl: 'https://c.example', checkOrigin: false },
    });
    expect(route).toMatchObject({
      x402Version: 1,
      settle: 'before-handler',
      availability: 'retired',
      retryAfterSeconds: 0,
      description: 'a report',
      mimeType: 'text/csv',
      canonical: { baseUrl: 'https://c.example', checkOrigin: false },
    });
  });

  it('canonical: false as no canonical rule', () => {
    expect(routeWith({ canonical: false })).not.toHaveProperty('canonical');
  });

  it.each([
    [true, false],
    [{}, false],
    [{ required: false }, false],
    [{ required: true }, true],
  ])('paymentIdentifier %j, and advertises it in the challenge with required %s', (option, required) => {
    const route = routeWith({ paymentIdentifier: option, extensions: { bazaar: { info: {} } } });
    expect(route.paymentIdentifier).toEqual({ required });
    const body = JSON.parse(Buffer.from(route.challenge('https://api.example.com/x').body).toString('utf8'));
    expect(body.extensions).toEqual({
      bazaar: { info: {} },
      'payment-identifier': { info: { required }, schema: PAYMENT_IDENTIFIER_JSON_SCHEMA },
    });
  });

  it('paymentIdentifier: false as a route that does not speak the extension', () => {
    const route = routeWith({ paymentIdentifier: false });
    expect(route).not.toHaveProperty('paymentIdentifier');
    expect(route.challenge('https://api.example.com/x').object).not.toHaveProperty('extensions');
  });
});
