import { createPrivateKey, type KeyObject, randomBytes, sign } from 'node:crypto';
import type { FacilitatorOperation } from '@tollbooth/core';

/**
 * Authentication of the fee service to its facilitator, from the environment: a CDP API key
 * (`CDP_API_KEY_ID` + `CDP_API_KEY_SECRET`, a fresh bearer JWT bound to each request), or one
 * static header (`FACILITATOR_AUTH_HEADER="Authorization: Bearer …"`) for facilitators that take
 * an API key as it is.
 */
export type FacilitatorAuth =
  | { kind: 'cdp'; keyId: string; secret: string }
  | { kind: 'header'; name: string; value: string };

const OPERATION_METHOD: Record<FacilitatorOperation, 'GET' | 'POST'> = {
  verify: 'POST',
  settle: 'POST',
  supported: 'GET',
};

/** Lifetime of a CDP JWT, s (each request gets its own). */
export const CDP_JWT_LIFETIME_S = 120;

const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/**
 * The CDP API key secret as a signing key: a PEM EC key (ES256) or a base64 Ed25519 key of 64
 * bytes, seed then public key (EdDSA).
 * @throws Error naming the accepted forms
 */
export function cdpSigningKey(secret: string): { key: KeyObject; alg: 'ES256' | 'EdDSA' } {
  const pem = secret.replace(/\\n/g, '\n').trim();
  if (pem.startsWith('-----BEGIN')) {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new Error('a PEM CDP API key secret must be an EC P-256 key');
    }
    return { key, alg: 'ES256' };
  }
  const raw = Buffer.from(secret.trim(), 'base64');
  if (raw.length !== 64) {
    throw new Error('must be a PEM EC key or a base64 Ed25519 key of 64 bytes');
  }
  const key = createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      d: raw.subarray(0, 32).toString('base64url'),
      x: raw.subarray(32).toString('base64url'),
    },
    format: 'jwk',
  });
  return { key, alg: 'EdDSA' };
}

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
