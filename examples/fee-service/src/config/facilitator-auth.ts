import { createPrivateKey, type KeyObject } from 'node:crypto';

/**
 * Authentication of the fee service to its facilitator, from the environment: a CDP API key
 * (`CDP_API_KEY_ID` + `CDP_API_KEY_SECRET`, a fresh bearer JWT bound to each request), or one
 * static header (`FACILITATOR_AUTH_HEADER="Authorization: Bearer …"`) for facilitators that take
 * an API key as it is.
 */
export type FacilitatorAuth =
  | { kind: 'cdp'; keyId: string; secret: string }
  | { kind: 'header'; name: string; value: string };

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
