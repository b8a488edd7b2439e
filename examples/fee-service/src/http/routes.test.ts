import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FEE_PREVIEW_PATH, PAID_RESOURCES } from '../resources/index';
import { createRouteLabeler } from './routes';
import type { ServiceRoute } from './types';

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
const serviceRoutes: ServiceRoute[] = [
  { method: 'GET', path: FEE_PREVIEW_PATH, handler },
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
