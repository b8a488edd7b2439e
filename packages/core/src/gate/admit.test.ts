import { describe, expect, it, vi } from 'vitest';
import { compileRoutes, type RouteMatch } from '../routes/compile-routes';
import type { RoutesConfig } from '../routes/types';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { admissionRefusal, matchRequest, paymentHeaderOf, requestIdOf, runPrecondition } from './admit';
import type { GateResponse, RequestView } from './types';

const BASE = 'https://api.example.com';
const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' };
const routes: RoutesConfig = {
  'GET /paid': { accepts },
  'GET /paused': { accepts, availability: 'paused', retryAfterSeconds: 30 },
  'GET /retired': { accepts, availability: 'retired' },
  'GET /canonical': { accepts, canonical: true },
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
    expect(json(refused.response).error.code).toBe('method_not_allowed');
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
    expect(json(early!.response).error.code).toBe('internal_error');
    expect(logger.error).toHaveBeenCalledWith(
      expect.objectContaining({ requestId: 'r-3' }),
      'route precondition failed',
    );
  });
});
