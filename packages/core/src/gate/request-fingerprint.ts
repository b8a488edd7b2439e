import { createHash } from 'node:crypto';

/** What makes two requests "the same request" for a payment identifier. */
export interface RequestFingerprintInput {
  /** Upper-case method. */
  method: string;
  /** The resource URL the route matched (origin and normalised path). */
  resourceUrl: string;
  /** The query string as received, without `?`; `undefined` when there was none. */
  query: string | undefined;
  body: Uint8Array;
}

/**
 * The query in canonical form: parameters decoded, sorted by name (stably, so repeated names keep
 * their order) and encoded again, so `?b=2&a=1` and `?a=1&b=2` (or `%41` and `A`) are one query.
 */
export function canonicalQuery(query: string | undefined): string {
  if (query === undefined || query === '') return '';
  const params = new URLSearchParams(query);
  params.sort();
  return params.toString();
}

/**
 * Hex SHA-256 of a request's method, canonical URL (resource URL and canonical query) and the
 * SHA-256 of its body: the fingerprint a payment identifier is bound to (docs/payment-identifier.md).
 */
export function requestFingerprint(input: RequestFingerprintInput): string {
  const query = canonicalQuery(input.query);
  const url = query === '' ? input.resourceUrl : `${input.resourceUrl}?${query}`;
  const body = createHash('sha256').update(input.body).digest('hex');
  return createHash('sha256')
    .update(JSON.stringify([input.method, url, body]))
    .digest('hex');
}
