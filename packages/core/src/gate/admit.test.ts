import { describe, expect, it, vi } from 'vitest';
import type { GateResponse, RequestView } from '../http/types';
import { compileRoutes } from '../routes/compile-routes';
import type { RouteMatch, RoutesConfig } from '../routes/types';
import { createGateHarness } from '../test-support/gate-harness';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { admissionRefusal, matchRequest, paymentHeaderOf, requestIdOf, runPrecondition } from './admit';

const BASE = 'https://api.example.com';
const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' };
const routes: RoutesConfig = {
  'GET /paid': { accepts },
  'GET /paused': { accepts, availability: 'paused', retryAfterSeconds: 30 },
  'GET /retired': { accepts, availability: 'retired' },
  'GET /canonical': { accepts, canonical: true },
  'GET /query': { accepts, canonical: { baseUrl: BASE, allowQuery: true } },
  'GET /anyhost': { accepts, canonical: { baseUrl: BASE, checkOrigin: false } },
  'GET /prefixed': { accepts, canonical: { baseUrl: `${BASE}/api`, checkOrigin: false } },
};
const table = compileRoutes(routes, { schemes: [createSimpleScheme()], baseUrl: BASE });

function view(target: string, headers: Record<string, string> = {}, method = 'GET'): RequestView {
  return {
    method,
    url: target.startsWith('http') ? target : `${BASE}${target}`,
    header: (name) => headers[name],
  };
}

function matched(request: RequestView): RouteMatch {
  const admitted = matchRequest(table, 'method-not-allowed', request);
  if (admitted.kind !== 'matched') throw new Error(`expected a match, got ${admitted.kind}`);
  return admitted.match;
}

const json = (response: GateResponse) => JSON.parse(Buffer.from(response.body).toString('utf8'));

describe('matchRequest', () => {
  it('passes a preflight and a request no paid route serves', () => {
    expect(matchRequest(table, 'method-not-allowed', view('/paid', {}, 'OPTIONS'))).toEqual({ kind: 'pass' });
    expect(matchRequest(table, 'method-not-allowed', view('/free'))).toEqual({ kind: 'pass' });
  });

  it('matches a paid route whatever the case of the method, with the request id it carries', () => {
    const admitted = matchRequest(
      table,
      'method-not-allowed',
      view('/paid', { 'x-request-id': 'r-1' }, 'get'),
    );
    expect(admitted).toMatchObject({ kind: 'matched', requestId: 'r-1' });
    if (admitted.kind === 'matched') expect(admitted.match.route.key).toBe('GET /paid');
  });

  it("answers 405 with Allow for a paid path's other method, or passes it when told to", () => {
    const refused = matchRequest(table, 'method-not-allowed', view('/paid', {}, 'POST'));
    if (refused.kind !== 'respond') throw new Error('expected a 405');
    expect(refused.response.status).toBe(405);
    expect(refused.response.headers.allow).toBe('GET, HEAD');
    expect(json(refused.response).error).toMatchObject({
      code: 'method_not_allowed',
      message: 'POST is not served here',
    });
    expect(matchRequest(table, 'pass', view('/paid', {}, 'POST'))).toEqual({ kind: 'pass' });
  });
});

describe('requestIdOf', () => {
  it.each([
    ['req-123', 'req-123'],
    ['a.b:c_d-1', 'a.b:c_d-1'],
  ])('keeps the well-formed id %s', (incoming, kept) => {
    expect(requestIdOf(view('/paid', { 'x-request-id': incoming }))).toBe(kept);
  });

  it('makes a new uuid for a request without one', () => {
    expect(requestIdOf(view('/paid'))).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
  });

  it.each(['a b\r\nc', 'x'.repeat(129), ''])('replaces the unsafe id %j with a new uuid', (incoming) => {
    expect(requestIdOf(view('/paid', { 'x-request-id': incoming }))).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('admissionRefusal', () => {
  it('admits an active route at its canonical URL', () => {
    expect(admissionRefusal(view('/paid'), matched(view('/paid')), 'r')).toBeUndefined();
    expect(admissionRefusal(view('/canonical'), matched(view('/canonical')), 'r')).toBeUndefined();
  });

  it.each([
    { target: '/paid#top', status: 400, code: 'invalid_request_target' },
    { target: '/paused', status: 503, code: 'resource_paused' },
    { target: '/retired', status: 410, code: 'resource_retired' },
    { target: '/canonical?x=1', status: 400, code: 'non_canonical_request' },
    { target: 'https://other.example.com/canonical', status: 400, code: 'non_canonical_request' },
  ])('refuses $target with $status $code', ({ target, status, code }) => {
    const request = view(target);
    const response = admissionRefusal(request, matched(request), 'r-2');
    expect(response?.status).toBe(status);
    expect(json(response!).error.code).toBe(code);
    expect(response!.headers['x-request-id']).toBe('r-2');
  });

  it('says why a target or URL is refused', () => {
    const message = (target: string) => {
      const request = view(target);
      return json(admissionRefusal(request, matched(request), 'r')!).error.message;
    };
    expect(message('/paid#top')).toBe('a request target cannot carry a #fragment');
    expect(message('/canonical?x=1')).toBe(
      `only the canonical URL ${BASE}/canonical is accepted, without a query string`,
    );
    expect(message('https://other.example.com/query')).toBe(
      `only the canonical URL ${BASE}/query is accepted`,
    );
  });

  it.each([
    ['a query where the rule allows one', '/query?b=2'],
    ['another host where the rule does not check the origin', 'https://other.example.com/anyhost'],
    ['an origin-form target (no scheme and host to check)', '/canonical'],
    ['the default port written out', 'https://api.example.com:443/canonical'],
    // The path of baseUrl is the public URL's: the proxy in front strips it, the route matched without it.
    ['the route path of a rule whose baseUrl has a path', `${BASE}/prefixed`],
  ])('admits %s', (_what, target) => {
    const request: RequestView = { ...view(target), url: target.startsWith('/') ? target : view(target).url };
    expect(admissionRefusal(request, matched(request), 'r')).toBeUndefined();
  });

  it.each([
    ['a path other than the canonical one', `${BASE}/CANONICAL`],
    ['a host that does not parse', 'https://exa mple.com/canonical'],
  ])('refuses %s as non-canonical', (_what, target) => {
    const request = view(target);
    expect(json(admissionRefusal(request, matched(request), 'r')!).error.code).toBe('non_canonical_request');
  });

  it('names the public canonical URL, path of baseUrl included, when it refuses', () => {
    const request = view(`${BASE}/prefixed?x=1`);
    expect(json(admissionRefusal(request, matched(request), 'r')!).error.message).toBe(
      `only the canonical URL ${BASE}/api/prefixed is accepted, without a query string`,
    );
  });

  it('tells a paused route when to come back', () => {
    const response = admissionRefusal(view('/paused'), matched(view('/paused')), 'r');
    expect(response!.headers['retry-after']).toBe('30');
  });
});

describe('paymentHeaderOf', () => {
  it('reads PAYMENT-SIGNATURE before X-PAYMENT, and nothing without either', () => {
    expect(paymentHeaderOf(view('/paid', { 'payment-signature': 'a', 'x-payment': 'b' }))).toEqual({
      value: 'a',
      name: 'payment-signature',
    });
    expect(paymentHeaderOf(view('/paid', { 'x-payment': 'b' }))).toEqual({ value: 'b', name: 'x-payment' });
    expect(paymentHeaderOf(view('/paid'))).toBeUndefined();
  });
});

describe('runPrecondition', () => {
  const answer: GateResponse = { status: 404, headers: {}, body: new Uint8Array() };
  const withPrecondition = (precondition: NonNullable<RoutesConfig[string]['precondition']>) =>
    compileRoutes({ 'GET /p': { accepts, precondition } }, { schemes: [createSimpleScheme()] });

  it("sends a precondition's own answer as it is, quietly, and goes on without one", async () => {
    const own = withPrecondition(() => answer);
    const request = view('http://localhost/p');
    const match = own.match('GET', request.url)!;
    expect(await runPrecondition({ logger: undefined }, request, match, 'r')).toEqual({
      response: answer,
      quiet: true,
    });
    const none = withPrecondition(async () => undefined);
    expect(
      await runPrecondition({ logger: undefined }, request, none.match('GET', request.url)!, 'r'),
    ).toBeUndefined();
  });

  it('answers 503 internal_error, logged, when the precondition throws', async () => {
    const failing = withPrecondition(() => {
      throw new Error('database down');
    });
    const logger = { warn: vi.fn(), error: vi.fn() };
    const request = view('http://localhost/p');
    const early = await runPrecondition({ logger }, request, failing.match('GET', request.url)!, 'r-3');
    expect(early?.quiet).toBe(false);
    expect(early?.response.status).toBe(503);
    expect(json(early!.response).error).toMatchObject({
      code: 'internal_error',
      message: 'the request could not be checked',
    });
    expect(logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ requestId: 'r-3' }),
      'route precondition failed',
    );
  });
});

describe('a canonical route of a gate whose baseUrl has a path', () => {
  // Built per test (mutants are switched on after import).
  it('challenges a request at the route path, for the public resource URL, and refuses another host', async () => {
    const h = createGateHarness({
      routes: { 'GET /x': { accepts, canonical: true } },
      gate: { baseUrl: 'https://api.example.com/v1' },
    });
    const outcome = await h.gate.handle(h.view('https://api.example.com/x'));
    if (outcome.kind !== 'respond') throw new Error('expected an answer');
    expect(outcome.response.status).toBe(402);
    expect(json(outcome.response)).toMatchObject({ resource: { url: 'https://api.example.com/v1/x' } });
    const other = await h.gate.handle(h.view('https://other.example.com/x'));
    expect(other.kind === 'respond' && json(other.response).error.code).toBe('non_canonical_request');
  });
});
