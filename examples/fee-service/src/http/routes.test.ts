import { type Availability, createPaymentGate, type RouteTable } from '@tollbooth/core';
import { createScriptedFacilitator } from '@tollbooth/core/testing';
import { createExactEvmScheme } from '@tollbooth/evm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEdge } from '../resources/edge';
import { type AnyResource, isPaid as isPaidResource, routeKey } from '../resources/kit';
import { patternCovers } from '../resources/publish';
import { PRICE_PATTERNS, RESOURCES } from '../resources/registry';
import { buildTestEnvironment, buildTestRouteTable, declaredPublications } from '../resources/testing';
import { requestIdOf } from './respond';
import { createRouteLabeler, LABEL_MEMO_PATH_MAX, LABEL_MEMO_SIZE } from './routes';
import type { RouteResult, ServiceRoute } from './types';

/** The labeler as it was: every route's pattern as a regular expression, the first match wins. */
function labelSlowly(routes: readonly ServiceRoute[], path: string): string {
  const found = routes.find((route) =>
    new RegExp(
      `^${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`,
    ).test(path),
  );
  return found?.path ?? 'other';
}

const handler = () => ({ status: 200 });
const PAID_RESOURCES = RESOURCES.filter(isPaidResource);
const serviceRoutes: ServiceRoute[] = [
  ...RESOURCES.filter((resource) => !isPaidResource(resource)).map((resource) => ({
    method: resource.method,
    path: resource.path,
    handler,
  })),
  { method: 'GET', path: '/.well-known/x402', handler },
  { method: 'GET', path: '/healthz', handler },
  { method: 'GET', path: '/metrics', handler },
  ...PAID_RESOURCES.map((resource) => ({ method: resource.method, path: resource.path, handler })),
];

/** Paths built from the routes' own segments, `:param`-looking pieces, dots and odd characters. */
function pathArb(routes: readonly ServiceRoute[]) {
  const segments = [...new Set(routes.flatMap((route) => route.path.split('/')))];
  const segment = fc.oneof(
    fc.constantFrom(...segments),
    fc.constantFrom('', '.', '..', '%2F', 'x', '840000', ':txid', 'a.b', 'A'),
    fc.string({ maxLength: 4 }),
  );
  return fc.oneof(
    fc.constantFrom(...routes.map((route) => route.path)),
    fc.array(segment, { minLength: 1, maxLength: 7 }).map((parts) => `/${parts.join('/')}`),
    fc.string({ maxLength: 12 }),
  );
}

describe('createRouteLabeler', () => {
  it("labels every path as the regex scan over the service's routes does", () => {
    const label = createRouteLabeler(serviceRoutes);
    fc.assert(
      fc.property(pathArb(serviceRoutes), (path) => {
        expect(label('GET', path)).toBe(labelSlowly(serviceRoutes, path));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps first-match order when pattern and literal routes overlap, in any order', () => {
    const overlapping: ServiceRoute[] = [
      { method: 'GET', path: '/a/:id', handler },
      { method: 'GET', path: '/a/b', handler },
      { method: 'GET', path: '/c/d', handler },
      { method: 'GET', path: '/c/:id', handler },
      { method: 'GET', path: '/e.f/(x)', handler },
      { method: 'GET', path: '/e.f/(x)', handler },
      { method: 'POST', path: '/a/:id/:part', handler },
    ];
    fc.assert(
      fc.property(
        fc.shuffledSubarray(overlapping, { minLength: 1 }),
        pathArb(overlapping),
        (routes, path) => {
          expect(createRouteLabeler(routes)('GET', path)).toBe(labelSlowly(routes, path));
        },
      ),
      { numRuns: 3000 },
    );
    expect(createRouteLabeler(overlapping)('GET', '/a/b')).toBe('/a/:id');
    expect(createRouteLabeler(overlapping)('GET', '/c/d')).toBe('/c/d');
    expect(createRouteLabeler(overlapping)('GET', '/eXf/(x)')).toBe('other');
  });
});

/** The service's real paid routes (every resource as declared, price patterns) in a gate. */
function serviceGate() {
  return createPaymentGate({
    routes: buildTestRouteTable({ publications: declaredPublications('local') }),
    schemes: [createExactEvmScheme()],
    facilitator: createScriptedFacilitator(),
  });
}

const methodArb = fc.constantFrom('GET', 'POST', 'HEAD', 'OPTIONS', 'get', 'PUT');
const targetArb = fc.constantFrom(
  '/api/v1/fees/now',
  '/api/v1/fees/now?x=1',
  '/API/V1/FEES/NOW',
  '/api/v1/fees/%6Eow',
  '/api/v1//fees/./now/',
  '/api/v1/fees/x/../now',
  'http://elsewhere.example/api/v1/fees/now',
  '/api/v1/fees/preview',
  '/api/v1/broadcast',
  '/api/v1/ai/chat?q=hi',
  '/api/v1/ai/explain/transaction/abc',
  '/api/v1/fees/observatory/anything',
  '/api/v1/analyst',
  '/api/v1/analystics',
  '/healthz',
  '/',
);

/** The edge as it was: the gate's full route match on the absolute URL, asked every time. */
function edgeAsBefore(table: RouteTable, paid: readonly AnyResource[]) {
  const preconditions = new Map(paid.map((resource) => [routeKey(resource), resource.precondition!]));
  const match = (request: { method: string; url: string }) => {
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') return undefined;
    return table.match(method, request.url);
  };
  return {
    // A paid path asked with a method it does not serve is the gate's too (405 with Allow).
    isPaid: (request: { method: string; url: string }) =>
      match(request) !== undefined ||
      (request.method.toUpperCase() !== 'OPTIONS' && table.methodsFor(request.url).length > 0),
    match,
    precondition(request: { method: string; url: string; header(name: string): string | undefined }) {
      const matched = match(request);
      if (matched?.route.availability !== 'active') return undefined;
      return preconditions.get(matched.route.key)?.(requestIdOf(request.header), {});
    },
  };
}

const availabilityArb = fc.dictionary(
  fc.constantFrom(...PAID_RESOURCES.map(routeKey)),
  fc.constantFrom<Availability>('active', 'paused', 'retired'),
);
// Origin-form targets: an absolute-form one was joined after the origin and missed (below).
const originForm = targetArb.filter((target) => target.startsWith('/'));

/** Every paid resource with a precondition that says which route answered. */
const PAID_WITH_PRECONDITION = PAID_RESOURCES.map((resource) => ({
  ...resource,
  precondition: (requestId: string): RouteResult => ({
    status: 503,
    body: { route: routeKey(resource), requestId },
  }),
}));

function setAvailability(table: RouteTable, availability: Record<string, Availability>) {
  for (const resource of PAID_RESOURCES) table.setAvailability(routeKey(resource), 'active');
  for (const [key, state] of Object.entries(availability)) table.setAvailability(key, state);
}

describe('createEdge', () => {
  it('answers isPaid on the raw target as the absolute-URL match did', () => {
    const requestArb = fc.array(fc.tuple(methodArb, originForm, fc.nat(1)), { maxLength: 30 });
    const gate = serviceGate();
    const edge = createEdge({ gate, publications: [], env: buildTestEnvironment() });
    fc.assert(
      fc.property(availabilityArb, requestArb, (availability, requests) => {
        setAvailability(gate.routes, availability);
        const before = edgeAsBefore(gate.routes, []);
        for (const [method, target, repeat] of requests) {
          for (let i = 0; i <= repeat; i++) {
            expect(edge.isPaid({ method, target })).toBe(
              before.isPaid({ method, url: `http://127.0.0.1:3000${target}` }),
            );
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("names a paid resource's own limit by the gate's match, while its route is active", () => {
    const env = buildTestEnvironment();
    const limits = new Map(
      PAID_RESOURCES.flatMap((resource) =>
        resource.rateLimit ? [[routeKey(resource), resource.rateLimit(env.config).name] as const] : [],
      ),
    );
    expect([...new Set(limits.values())]).toEqual(['ai']);
    // A price pattern covering a limited resource is counted under that limit too (its other paths).
    for (const pattern of PRICE_PATTERNS) {
      const covered = PAID_RESOURCES.find((r) => r.rateLimit && patternCovers(pattern.path, r.path));
      if (covered) limits.set(pattern.path, covered.rateLimit!(env.config).name);
    }
    expect([...limits.keys()]).toEqual(expect.arrayContaining(['/api/v1/ai/*', '/api/v1/analyst*']));
    const gate = serviceGate();
    const edge = createEdge({
      gate,
      publications: declaredPublications('local'),
      env,
      patterns: PRICE_PATTERNS,
    });
    const targets = fc.oneof(
      originForm,
      fc.constantFrom('/api/v1/%61i/chat?q=hi', '/api/v1/ai/./chat?q=hi', '/api/v1/x/../ai/chat'),
    );
    let named = 0;
    fc.assert(
      fc.property(availabilityArb, methodArb, targets, (availability, method, target) => {
        setAvailability(gate.routes, availability);
        const url = `http://127.0.0.1:3000${target}`;
        const matched = edgeAsBefore(gate.routes, []).match({ method, url });
        const expected = matched?.route.availability === 'active' ? limits.get(matched.route.key) : undefined;
        if (expected) named += 1;
        expect(edge.ownLimit({ method, target }), `${method} ${target}`).toBe(expected);
      }),
      { numRuns: 500 },
    );
    expect(named).toBeGreaterThan(0);
    setAvailability(gate.routes, {});
    expect(edge.ownLimit({ method: 'GET', target: '/api/v1/%61i/chat?q=hi' })).toBe('ai');
    // Paths under the AI prefix that no resource serves: paid at the pattern's price, and limited.
    expect(edge.ownLimit({ method: 'GET', target: '/api/v1/ai/anything' })).toBe('ai');
    expect(edge.ownLimit({ method: 'POST', target: '/api/v1/ai/x/y' })).toBe('ai');
    expect(edge.ownLimit({ method: 'GET', target: '/api/v1/analystics' })).toBe('ai');
    expect(edge.ownLimit({ method: 'GET', target: '/api/v1/fees/observatory/anything' })).toBeUndefined();
  });

  it('judges an absolute-form target as the gate does (the joined URL used to hide it from the rate limit)', () => {
    const gate = serviceGate();
    const edge = createEdge({ gate, publications: [], env: buildTestEnvironment() });
    const target = 'http://elsewhere.example/api/v1/fees/now';
    expect(gate.isPaid('GET', target)).toBe(true);
    expect(edge.isPaid({ method: 'GET', target })).toBe(true);
    expect(
      edgeAsBefore(gate.routes, []).isPaid({ method: 'GET', url: `http://127.0.0.1:3000${target}` }),
    ).toBe(false);
  });
});

describe("a paid resource's precondition in the gate (buildRoutesConfig)", () => {
  it('answers before any challenge where the edge did, on the same match, unless the canonical rule refused first', async () => {
    const requestArb = fc.array(fc.tuple(methodArb, originForm), { minLength: 1, maxLength: 20 });
    const gate = createPaymentGate({
      routes: buildTestRouteTable({ publications: declaredPublications('local', PAID_WITH_PRECONDITION) }),
      schemes: [createExactEvmScheme()],
      facilitator: createScriptedFacilitator(),
    });
    const before = edgeAsBefore(gate.routes, PAID_WITH_PRECONDITION);
    const header = (name: string) => (name === 'x-request-id' ? 'req-1' : undefined);
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(availabilityArb, requestArb, async (availability, requests) => {
        setAvailability(gate.routes, availability);
        for (const [method, target] of requests) {
          const url = `http://127.0.0.1:3000${target}`;
          const outcome = await gate.handle({ method, url, header });
          const response = outcome.kind === 'respond' ? outcome.response : undefined;
          const body = response && JSON.parse(Buffer.from(response.body).toString('utf8') || 'null');
          const expected = before.precondition({ method, url, header });
          if (expected === undefined) {
            expect(body?.route, `${method} ${target}`).toBeUndefined();
          } else if (response?.status === 400) {
            expect(body.error.code).toBe('non_canonical_request');
            expect(before.match({ method, url })?.route.canonical).toBeTruthy();
          } else {
            answered += 1;
            expect(response?.status, `${method} ${target}`).toBe(503);
            expect(body).toEqual(expected.body);
          }
        }
      }),
      { numRuns: 200 },
    );
    expect(answered).toBeGreaterThan(0);
  });

  it('refuses input the resource refuses with 400 before the challenge, and challenges valid input', async () => {
    const gate = serviceGate();
    const header = () => undefined;
    const url = 'http://127.0.0.1:3000/api/v1/fees/landscape';
    const refused = await gate.handle({ method: 'GET', url: `${url}?x=1`, header });
    const response = refused.kind === 'respond' ? refused.response : undefined;
    expect(response?.status).toBe(400);
    expect(response?.headers['payment-required']).toBeUndefined();
    expect(JSON.parse(Buffer.from(response!.body).toString('utf8')).error.code).toBe('invalid_request');
    const challenged = await gate.handle({ method: 'GET', url, header });
    expect(challenged.kind === 'respond' && challenged.response.status).toBe(402);
  });
});

describe('createRouteLabeler memo', () => {
  it('labels a path the same when asked again, past its bound and for paths too long to keep', () => {
    const label = createRouteLabeler(serviceRoutes);
    const paths = serviceRoutes.map((route) => route.path.replaceAll(/:[A-Za-z_]+/g, '840000'));
    const first = paths.map((path) => label('GET', path));
    expect(first).toEqual(paths.map((path) => labelSlowly(serviceRoutes, path)));
    for (let i = 0; i <= LABEL_MEMO_SIZE; i++) label('GET', `/unknown/${i}`);
    expect(paths.map((path) => label('GET', path))).toEqual(first);
    const long = `/${'a'.repeat(LABEL_MEMO_PATH_MAX)}`;
    expect(label('GET', long)).toBe('other');
    expect(label('GET', long)).toBe(labelSlowly(serviceRoutes, long));
  });
});
