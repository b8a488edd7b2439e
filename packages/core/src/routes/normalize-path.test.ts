import { describe, expect, it } from 'vitest';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { compileRoutes } from './compile-routes';
import { normalizeTarget } from './normalize-path';

// Compiled inside each test, not once at import: a table compiled at import would not see the
// mutants that mutation testing activates test by test (docs/testing.md).
const compileTable = () =>
  compileRoutes(
    {
      'GET /api/v1/fees/now': { accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' } },
    },
    { schemes: [createSimpleScheme()], baseUrl: 'https://api.example.com' },
  );

describe('normalizeTarget', () => {
  // A dot segment spelled with percent-encoded dots is still a dot segment: left undecoded, the
  // free prefix would hide the paid path behind it and the request would pass unpaid.
  it.each([
    '/api/v1/free/%2e%2e/fees/now',
    '/api/v1/free/%2E%2E/fees/now',
    '/api/v1/free/%2e%2E/fees/now',
    '/api/v1/free/.%2e/fees/now',
    '/api/v1/free/%2e./fees/now',
    '/api/v1/free/%252e%252e/fees/now',
    '/api/v1/free/%252E%252E/fees/now',
    '/api/v1/free/%25252e%25252e/fees/now',
    '/api/v1/free/%2e%2e%2ffees/now',
    '/api/v1/fees/%2e/now',
    '/api/v1/fees/%2E/now',
    '/api/v1/fees/%252e/now',
    '/api/v1/fees/now/%2e',
    '/api/v1/fees/now/x/%2e%2e',
    '/api/v1/free/%2e%2e/%2e%2e/v1/fees/now',
  ])('resolves the encoded dot segments of %s to the paid path', (target) => {
    expect(normalizeTarget(target).path).toBe('/api/v1/fees/now');
    expect(compileTable().match('GET', target)?.route.key).toBe('GET /api/v1/fees/now');
  });

  it.each([
    ['/api/v1/fees/%2e%2e%2e/now', '/api/v1/fees/.../now'],
    ['/api/v1/fees/now%2ejson', '/api/v1/fees/now.json'],
    ['/api/v1/fees/%2enow', '/api/v1/fees/.now'],
  ])('keeps %s, whose dots are part of a name, as %s', (target, path) => {
    expect(normalizeTarget(target).path).toBe(path);
    expect(compileTable().match('GET', target)).toBeUndefined();
  });

  it('never climbs above the root', () => {
    expect(normalizeTarget('/%2e%2e/%2e%2e/api/v1/fees/now').path).toBe('/api/v1/fees/now');
    expect(normalizeTarget('/..').path).toBe('/');
  });

  it('splits an absolute target into origin, raw path and query, without decoding the raw parts', () => {
    expect(normalizeTarget('HTTPS://API.Example.com:8443/api/%2e%2e/Fees?a=%2e&b#frag')).toEqual({
      origin: 'https://api.example.com:8443',
      rawPath: '/api/%2e%2e/Fees',
      path: '/Fees',
      query: 'a=%2e&b',
    });
    expect(normalizeTarget('/plain/path?')).toStrictEqual({
      rawPath: '/plain/path',
      path: '/plain/path',
      query: '',
    });
  });

  it.each([
    ['/plain/path', { rawPath: '/plain/path', path: '/plain/path' }],
    ['/a/../plain//path/', { rawPath: '/a/../plain//path/', path: '/plain/path' }],
    ['https://a.example/plain', { origin: 'https://a.example', rawPath: '/plain', path: '/plain' }],
    ['https://a.example/a/./plain', { origin: 'https://a.example', rawPath: '/a/./plain', path: '/a/plain' }],
    ['/a/%2e/b?', { rawPath: '/a/%2e/b', path: '/a/b', query: '' }],
  ])('gives %s no origin or query it did not carry', (target, expected) => {
    expect(normalizeTarget(target)).toStrictEqual(expected);
  });

  it.each([
    ['https://a.example?x=1', { origin: 'https://a.example', rawPath: '', path: '/', query: 'x=1' }],
    ['?x=1', { rawPath: '', path: '/', query: 'x=1' }],
    ['https://a.example', { origin: 'https://a.example', rawPath: '', path: '/' }],
  ])('reads %s, whose path is empty, as the root', (target, expected) => {
    expect(normalizeTarget(target)).toStrictEqual(expected);
  });

  it('decodes four layers of percent-encoding and leaves a fifth as it is', () => {
    expect(normalizeTarget('/api/v1/fees/%2525256Eow').path).toBe('/api/v1/fees/now');
    expect(compileTable().match('GET', '/api/v1/fees/%2525256Eow')?.route.key).toBe('GET /api/v1/fees/now');
    expect(normalizeTarget('/api/v1/fees/%252525256Eow').path).toBe('/api/v1/fees/%6Eow');
  });
});
