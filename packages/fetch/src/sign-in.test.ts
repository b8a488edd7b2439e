import { decodeHeaderJson, type PaymentRequired } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import { encodeSignInProof, PaidRoutes, signInOfferOf } from './sign-in';

const offerOf = (info: Record<string, unknown>, chains = [{ chainId: 'eip155:8453', type: 'eip191' }]) =>
  ({
    x402Version: 2,
    resource: { url: 'https://api.example.com/x' },
    accepts: [],
    extensions: { 'sign-in-with-x': { info, supportedChains: chains } },
  }) as unknown as PaymentRequired;

const INFO = {
  domain: 'api.example.com',
  uri: 'https://api.example.com/x',
  version: '1',
  nonce: 'a'.repeat(60),
  issuedAt: '2026-12-05T09:00:00.000Z',
};

describe('signInOfferOf', () => {
  it('takes an offer bound to the origin asked, on the network paid on', () => {
    expect(signInOfferOf(offerOf(INFO), 'https://api.example.com/x', 'eip155:8453')).toEqual({
      info: INFO,
      chainId: 'eip155:8453',
      type: 'eip191',
    });
  });

  it.each([
    ['another domain', { ...INFO, domain: 'evil.example' }, 'eip155:8453'],
    ['a uri on another origin', { ...INFO, uri: 'https://evil.example/x' }, 'eip155:8453'],
    ['a uri that is no URL', { ...INFO, uri: 'x' }, 'eip155:8453'],
    ['a network it did not pay on', INFO, 'eip155:84532'],
  ])('refuses %s', (_what, info, network) => {
    expect(signInOfferOf(offerOf(info), 'https://api.example.com/x', network)).toBeUndefined();
  });

  it('refuses a challenge without the extension', () => {
    const plain = { ...offerOf(INFO), extensions: {} } as PaymentRequired;
    expect(signInOfferOf(plain, 'https://api.example.com/x', 'eip155:8453')).toBeUndefined();
  });
});

describe('encodeSignInProof and PaidRoutes', () => {
  it('puts the offer, the address, the chain and the signature in the header', () => {
    const proof = encodeSignInProof({ info: INFO, chainId: 'eip155:8453', type: 'eip191' }, '0xA', '0xsig');
    expect(decodeHeaderJson(proof)).toEqual({
      ...INFO,
      address: '0xA',
      chainId: 'eip155:8453',
      type: 'eip191',
      signature: '0xsig',
    });
  });

  it('remembers a paid route by method and resource URL', () => {
    const routes = new PaidRoutes();
    routes.remember('get', 'https://api.example.com/x', 'eip155:8453');
    expect(routes.networkOf('GET', 'https://api.example.com/x')).toBe('eip155:8453');
    expect(routes.networkOf('POST', 'https://api.example.com/x')).toBeUndefined();
    routes.forget('GET', 'https://api.example.com/x');
    expect(routes.networkOf('GET', 'https://api.example.com/x')).toBeUndefined();
  });
});
