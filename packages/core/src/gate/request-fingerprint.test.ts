import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalQuery, requestFingerprint } from './request-fingerprint';

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const URL = 'https://api.example.com/report';

describe('canonicalQuery', () => {
  it.each([
    [undefined, ''],
    ['', ''],
    ['b=2&a=1', 'a=1&b=2'],
    ['a=2&b=1&a=1', 'a=2&a=1&b=1'],
    ['%41=x%20y', 'A=x+y'],
  ])('writes %j as %j', (query, canonical) => {
    expect(canonicalQuery(query)).toBe(canonical);
  });
});

describe('requestFingerprint', () => {
  // Bindings are stored (every ledger store) and compared by instances that may run other
  // versions: the fingerprint is SHA-256 of the JSON of [method, canonical URL, SHA-256 of the body].
  it('is the documented hash of the method, the canonical URL and the body hash', () => {
    const body = Buffer.from('{"q":1}');
    expect(requestFingerprint({ method: 'POST', resourceUrl: URL, query: 'b=2&a=1', body })).toBe(
      sha256(JSON.stringify(['POST', `${URL}?a=1&b=2`, sha256(body)])),
    );
  });

  it.each([undefined, ''])('leaves the URL without "?" for the query %j', (query) => {
    expect(requestFingerprint({ method: 'GET', resourceUrl: URL, query, body: new Uint8Array() })).toBe(
      sha256(JSON.stringify(['GET', URL, sha256('')])),
    );
  });
});
