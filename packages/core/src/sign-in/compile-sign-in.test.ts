import { describe, expect, it } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import { createPaymentGate } from '../gate/create-payment-gate';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { compileRoutes } from '../routes/compile-routes';
import type { RoutesConfig } from '../routes/types';
import type { SchemeServer } from '../scheme';
import { ACCEPTS, BASE } from '../test-support/gate-harness';
import { createScriptedFacilitator } from '../test-support/scripted-facilitator';
import { createSimpleScheme } from '../test-support/simple-scheme';
import { createNonceIssuer } from './nonce';

const SECRET = 'a secret of at least thirty-two characters';

/** The simple scheme, verifying sign-ins on every eip155 network (signature checks are the EVM package's). */
function signingScheme(): SchemeServer {
  return {
    ...createSimpleScheme(),
    signIn: {
      signatureType: () => 'eip191',
      canonicalAddress: (address) => address,
      verify: async (proof) => ({ ok: true, signer: proof.address }),
    },
  };
}

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof TollboothConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('sign-in configuration', () => {
  it('lists every problem of a sign-in route at once', () => {
    const routes: RoutesConfig = {
      'GET /none': { accepts: ACCEPTS, signIn: {} },
      'GET /negative': { accepts: ACCEPTS, signIn: { passSeconds: -1, uses: 1.5 } },
      'GET /old': { accepts: ACCEPTS, x402Version: 1, signIn: { uses: 1 } },
      'TOOL /tool': { accepts: ACCEPTS, signIn: { uses: 1 } },
    };
    expect(problemsOf(() => compileRoutes(routes, { schemes: [signingScheme()] }))).toEqual([
      'route "GET /none": signIn needs passSeconds, uses or both (what one payment buys)',
      'route "GET /none": signIn needs the gate\'s signIn option (the secret that signs nonces)',
      'route "GET /none": signIn needs the baseUrl option (the public URL a proof must name, never Host)',
      'route "GET /negative": signIn.passSeconds must be a positive integer',
      'route "GET /negative": signIn.uses must be a positive integer',
      'route "GET /negative": signIn needs the gate\'s signIn option (the secret that signs nonces)',
      'route "GET /negative": signIn needs the baseUrl option (the public URL a proof must name, never Host)',
      'route "GET /old": sign-in is an x402 v2 extension (x402Version is 1)',
      'route "GET /old": signIn needs the gate\'s signIn option (the secret that signs nonces)',
      'route "GET /old": signIn needs the baseUrl option (the public URL a proof must name, never Host)',
      'route "TOOL /tool": sign-in is an HTTP extension; a tool route cannot have it',
      'route "TOOL /tool": signIn needs the gate\'s signIn option (the secret that signs nonces)',
      'route "TOOL /tool": signIn needs the baseUrl option (the public URL a proof must name, never Host)',
    ]);
  });

  it('refuses a short secret and a scheme that cannot verify sign-ins', () => {
    const routes: RoutesConfig = { 'GET /x': { accepts: ACCEPTS, signIn: { uses: 3 } } };
    expect(
      problemsOf(() =>
        compileRoutes(routes, {
          schemes: [createSimpleScheme()],
          baseUrl: BASE,
          signIn: { secret: 'short' },
        }),
      ),
    ).toEqual([
      'signIn.secret must be a string of at least 32 characters (the same on every instance)',
      'route "GET /x": signIn needs a scheme that verifies sign-ins on one of the route\'s networks',
    ]);
  });

  it('refuses a store without access grants', () => {
    // A store of one's own with the ledger methods only (the sign-in ones are optional in its type).
    const { grantAccess, useAccess, returnAccess, claimNonce, ...store } = createMemoryLedgerStore();
    void [grantAccess, useAccess, returnAccess, claimNonce];
    expect(
      problemsOf(() =>
        createPaymentGate({
          routes: { 'GET /x': { accepts: ACCEPTS, signIn: { uses: 3 } } },
          schemes: [signingScheme()],
          facilitator: createScriptedFacilitator(),
          baseUrl: BASE,
          signIn: { secret: SECRET },
          ledger: store,
        }),
      ),
    ).toEqual([
      'ledger: a sign-in route needs a store with access grants (missing grantAccess, useAccess, returnAccess, claimNonce)',
    ]);
  });

  it('declares a fresh nonce of this route in every challenge, its schema in the body only', () => {
    let now = 1_800_000_000_000;
    const table = compileRoutes(
      { 'GET /x': { accepts: ACCEPTS, signIn: { passSeconds: 60, statement: 'Sign in to X' } } },
      { schemes: [signingScheme()], baseUrl: BASE, signIn: { secret: SECRET, now: () => now } },
    );
    const route = table.get('GET /x')!;
    const first = route.challenge(`${BASE}/x`);
    now += 1000;
    const second = route.challenge(`${BASE}/x`);
    const header = JSON.parse(Buffer.from(first.header!, 'base64').toString('utf8'));
    const offer = header.extensions['sign-in-with-x'];
    expect(offer).toEqual({
      info: {
        domain: 'api.example.com',
        uri: `${BASE}/x`,
        version: '1',
        nonce: expect.stringMatching(/^[0-9a-f]{60}$/),
        issuedAt: new Date(1_800_000_000_000).toISOString(),
        expirationTime: new Date(1_800_000_300_000).toISOString(),
        statement: 'Sign in to X',
        resources: [`${BASE}/x`],
      },
      supportedChains: [{ chainId: 'eip155:8453', type: 'eip191' }],
    });
    const body = JSON.parse(Buffer.from(second.body).toString('utf8'));
    expect(body.extensions['sign-in-with-x'].schema.required).toContain('signature');
    expect(body.extensions['sign-in-with-x'].info.nonce).not.toBe(offer.info.nonce);
    const nonces = createNonceIssuer(SECRET);
    expect(nonces.check(offer.info.nonce, 'GET /x')).toBe(1_800_000_000_000);
    expect(nonces.check(offer.info.nonce, 'POST /x')).toBeUndefined();
    expect(createNonceIssuer(`${SECRET}!`).check(offer.info.nonce, 'GET /x')).toBeUndefined();
  });
});
