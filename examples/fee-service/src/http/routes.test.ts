import { type Availability, createPaymentGate, type RouteTable } from '@tollbooth/core';
import { createScriptedFacilitator } from '@tollbooth/core/testing';
import { createExactEvmScheme } from '@tollbooth/evm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AnyResource, isPaid as isPaidResource, routeKey } from '../resources/kit';
import type { Publication } from '../resources/publish';
import { RESOURCES } from '../resources/registry';
import { buildTestEnvironment, buildTestRouteTable, declaredPublications } from '../resources/testing';
import { requestIdOf } from './respond';
import { createEdge, createRouteLabeler, rememberLastPaidCheck } from './routes';
import type { EdgeRequest, RouteResult, ServiceRoute } from './types';

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

describe('rememberLastPaidCheck', () => {
  it('answers every question as the gate does, repeated or not, in any order', () => {
    const gate = serviceGate();
    fc.assert(
      fc.property(fc.array(fc.tuple(methodArb, targetArb, fc.nat(2)), { maxLength: 40 }), (calls) => {
        const remembered = rememberLastPaidCheck((method, target) => gate.isPaid(method, target));
        for (const [method, target, repeat] of calls) {
          for (let i = 0; i <= repeat; i++)
            expect(remembered(method, target)).toBe(gate.isPaid(method, target));
        }
      }),
      { numRuns: 500 },
    );
  });
});

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
    precondition(request: { method: string; url: string; header(name: string): string | undefined }) {
      const matched = match(request);
      if (matched?.route.availability !== 'active') return undefined;
      return preconditions.get(matched.route.key)?.(requestIdOf(request.header), {});
    },
  };
}

describe('createEdge', () => {
  it('answers isPaid and preconditions on the raw target as the absolute-URL match did', () => {
    const availabilityArb = fc.dictionary(
      fc.constantFrom(...PAID_RESOURCES.map(routeKey)),
      fc.constantFrom<Availability>('active', 'paused', 'retired'),
    );
    // Origin-form targets: an absolute-form one was joined after the origin and missed (below).
    const originForm = targetArb.filter((target) => target.startsWith('/'));
    const requestArb = fc.array(fc.tuple(methodArb, originForm, fc.nat(1)), { maxLength: 30 });
    const gate = serviceGate();
    fc.assert(
      fc.property(availabilityArb, requestArb, (availability, requests) => {
        for (const resource of PAID_RESOURCES) gate.routes.setAvailability(routeKey(resource), 'active');
        for (const [key, state] of Object.entries(availability)) gate.routes.setAvailability(key, state);
        // Every paid resource with a precondition that says which route answered.
        const paid = PAID_RESOURCES.map((resource) => ({
          ...resource,
          precondition: (requestId: string): RouteResult => ({
            status: 503,
            body: { route: routeKey(resource), requestId },
          }),
        }));
        const before = edgeAsBefore(gate.routes, paid);
        const isPaid = rememberLastPaidCheck((method, target) => gate.isPaid(method, target));
        const publications: Publication[] = paid.map((resource) => ({
          resource,
          key: routeKey(resource),
          availability: 'active',
        }));
        const edge = createEdge({
          table: () => gate.routes,
          publications,
          env: buildTestEnvironment(),
          isPaid,
        });
        const header = (name: string) => (name === 'x-request-id' ? 'req-1' : undefined);
        for (const [method, target, repeat] of requests) {
          const request: EdgeRequest = { method, target, header, readBody: async () => Buffer.alloc(0) };
          const absolute = { method, url: `http://127.0.0.1:3000${target}`, header };
          for (let i = 0; i <= repeat; i++) {
            expect(edge.isPaid(request)).toBe(before.isPaid(absolute));
            expect(edge.precondition(request)).toEqual(before.precondition(absolute));
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('judges an absolute-form target as the gate does (the joined URL used to hide it from the rate limit)', () => {
    const gate = serviceGate();
    const edge = createEdge({ table: () => gate.routes, publications: [], env: buildTestEnvironment() });
    const target = 'http://elsewhere.example/api/v1/fees/now';
    expect(gate.isPaid('GET', target)).toBe(true);
    expect(
      edge.isPaid({ method: 'GET', target, header: () => undefined, readBody: async () => Buffer.alloc(0) }),
    ).toBe(true);
    expect(
      edgeAsBefore(gate.routes, []).isPaid({ method: 'GET', url: `http://127.0.0.1:3000${target}` }),
    ).toBe(false);
  });
});
