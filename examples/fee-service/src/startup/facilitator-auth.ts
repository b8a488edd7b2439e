// The headers that authenticate each facilitator request, from the authentication the
// configuration names (config/facilitator-auth.ts).
import { type KeyObject, randomBytes, sign } from 'node:crypto';
import type { FacilitatorOperation } from '@tollbooth/core';
import { cdpSigningKey, type FacilitatorAuth } from '../config/facilitator-auth';

const OPERATION_METHOD: Record<FacilitatorOperation, 'GET' | 'POST'> = {
  verify: 'POST',
  settle: 'POST',
  supported: 'GET',
};

/** Lifetime of a CDP JWT, s (each request gets its own). */
export const CDP_JWT_LIFETIME_S = 120;

const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/**
 * A CDP bearer JWT for one request: `sub` the key id, `iss` "cdp", the request's method, host and
 * path in `uris`, valid {@link CDP_JWT_LIFETIME_S} s, a random nonce in the header.
 */
export function cdpJwt(
  signing: { key: KeyObject; alg: 'ES256' | 'EdDSA' },
  keyId: string,
  request: { method: string; host: string; path: string },
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const header = { alg: signing.alg, kid: keyId, typ: 'JWT', nonce: randomBytes(16).toString('hex') };
  const claims = {
    sub: keyId,
    iss: 'cdp',
    uris: [`${request.method} ${request.host}${request.path}`],
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + CDP_JWT_LIFETIME_S,
  };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature =
    signing.alg === 'ES256'
      ? sign('sha256', Buffer.from(input), { key: signing.key, dsaEncoding: 'ieee-p1363' })
      : sign(null, Buffer.from(input), signing.key);
  return `${input}.${b64url(signature)}`;
}

/**
 * The facilitator client's `createAuthHeaders` hook for a configured authentication: the headers
 * of one operation against `facilitatorUrl` (`/verify`, `/settle`, `/supported` appended).
 */
export function facilitatorAuthHeaders(
  auth: FacilitatorAuth,
  facilitatorUrl: string,
): (operation: FacilitatorOperation) => Record<string, string> {
  if (auth.kind === 'header') {
    const headers = { [auth.name]: auth.value };
    return () => headers;
  }
  const signing = cdpSigningKey(auth.secret);
  const base = new URL(facilitatorUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  return (operation) => ({
    authorization: `Bearer ${cdpJwt(signing, auth.keyId, {
      method: OPERATION_METHOD[operation],
      host: base.host,
      path: `${basePath}/${operation}`,
    })}`,
  });
}
