import { describe, expect, it } from 'vitest';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { compileRoutes } from './compile-routes';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' };

/** The route a GET of `url` pays for, when `key` is the only paid route; `undefined` when free. */
function paidBy(key: string, url: string) {
  const table = compileRoutes({ [key]: { accepts } }, { schemes: [createSimpleScheme()] });
  return table.match('GET', url);
}

describe('route paths', () => {
  it.each([
    ['GET /a/*/c', '/a/x/c'],
    ['GET /a/*/c', '/a/x/y/c'],
    ['GET /a/*', '/a'],
    ['GET /a/*', '/A/b/c'],
    ['GET /a*', '/abc/d'],
    ['GET /a/b*c', '/a/bxyzc'],
    ['GET /tx/:id', '/TX/abc'],
    ['GET /v1.0/:id', '/v1.0/7'],
    ['GET /books:search', '/books:search'],
    ['GET /', '/'],
  ])('%s prices %s', (key, url) => {
    expect(paidBy(key, url)?.route.key).toBe(key);
  });

  it.each([
    // An inner `*` segment stands for at least the slash around it; only a trailing one is optional.
    ['GET /a/*/c', '/a/c'],
    ['GET /a/*/c', '/a/x/d'],
    ['GET /a/b*c', '/a/bxyz'],
    ['GET /v1.0/:id', '/v1x0/7'],
    ['GET /tx/:id', '/tx'],
    ['GET /tx/:id', '/tx/a/b'],
    // `:name` is a parameter only as a whole segment: a `:` inside a segment is literal text (a
    // segment starting with one that is no param is refused, see compile-routes-config.test.ts).
    ['GET /books:search', '/books'],
    ['GET /books:search', '/other'],
  ])('%s leaves %s free', (key, url) => {
    expect(paidBy(key, url)).toBeUndefined();
  });

  it.each([
    ['GET /tx/:id', { id: 'AbC' }, '/tx/AbC'],
    ['GET /tx/:from/:to_2', { from: 'a', to_2: 'b' }, '/tx/a/b'],
    ['GET /u/:Name/x', { Name: 'é' }, '/u/%C3%A9/x'],
  ])('%s reads its params', (key, params, url) => {
    expect(paidBy(key, url)?.params).toEqual(params);
  });

  it('marks only a route with a wildcard as a price pattern, and counts each wildcard against it', () => {
    const table = compileRoutes(
      {
        'GET /a': { accepts },
        'GET /b/:id': { accepts },
        'GET /c/*': { accepts },
        'GET /d*': { accepts },
        'GET /e/*/f/*': { accepts },
      },
      { schemes: [createSimpleScheme()] },
    );
    expect(table.routes.map((route) => [route.key, route.isPattern])).toEqual([
      ['GET /e/*/f/*', true],
      ['GET /a', false],
      ['GET /b/:id', false],
      ['GET /c/*', true],
      ['GET /d*', true],
    ]);
  });
});
