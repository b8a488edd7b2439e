import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cdpSigningKey } from '../config/facilitator-auth';
import { cdpJwt, facilitatorAuthHeaders } from './facilitator-auth';

const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

describe('facilitator authentication', () => {
  it('signs a CDP JWT with a base64 Ed25519 key (seed then public key) that the public key verifies', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const secret = Buffer.concat([
      Buffer.from(jwk.d!, 'base64url'),
      Buffer.from(jwk.x!, 'base64url'),
    ]).toString('base64');
    const signing = cdpSigningKey(secret);
    expect(signing.alg).toBe('EdDSA');
    const jwt = cdpJwt(
      signing,
      'key-1',
      { method: 'POST', host: 'api.cdp.coinbase.com', path: '/platform/v2/x402/settle' },
      1_000,
    );
    const [header, claims, signature] = jwt.split('.') as [string, string, string];
    expect(
      verify(null, Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature, 'base64url')),
    ).toBe(true);
    expect(decode(header)).toMatchObject({
      alg: 'EdDSA',
      kid: 'key-1',
      typ: 'JWT',
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(decode(claims)).toEqual({
      sub: 'key-1',
      iss: 'cdp',
      uris: ['POST api.cdp.coinbase.com/platform/v2/x402/settle'],
      iat: 1_000,
      nbf: 1_000,
      exp: 1_120,
    });
  });

  it('gives each operation its own token, bound to its method and path', () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString()
      .replaceAll('\n', '\\n'); // as an environment file often holds it
    const headers = facilitatorAuthHeaders(
      { kind: 'cdp', keyId: 'k', secret: pem },
      'https://api.cdp.coinbase.com/platform/v2/x402/',
    );
    const uris = (['verify', 'settle', 'supported'] as const).map(
      (operation) => decode(headers(operation)['authorization']!.split(' ')[1]!.split('.')[1]!).uris[0],
    );
    expect(uris).toEqual([
      'POST api.cdp.coinbase.com/platform/v2/x402/verify',
      'POST api.cdp.coinbase.com/platform/v2/x402/settle',
      'GET api.cdp.coinbase.com/platform/v2/x402/supported',
    ]);
    expect(() =>
      cdpSigningKey(
        generateKeyPairSync('ec', { namedCurve: 'secp256k1' })
          .privateKey.export({ type: 'pkcs8', format: 'pem' })
          .toString(),
      ),
    ).toThrow(/P-256/);
  });
});
