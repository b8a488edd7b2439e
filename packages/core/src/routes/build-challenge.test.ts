import { describe, expect, it } from 'vitest';
import { knownBodyText } from '../http/known-text';
import { sendableBody } from '../node/adapter-helpers';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import type { Challenge } from './build-challenge';
import { compileRoutes } from './compile-routes';
import type { RouteConfig } from './types';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' };

/** The 402 challenge of the route `GET /x` with these settings. */
function challengeOf(settings: Partial<RouteConfig>): Challenge {
  const table = compileRoutes(
    { 'GET /x': { accepts, ...settings } },
    { schemes: [createSimpleScheme()], baseUrl: 'https://a.example' },
  );
  return table.get('GET /x')!.challenge('https://a.example/x');
}

const bodyOf = (challenge: Challenge) => JSON.parse(Buffer.from(challenge.body).toString('utf8'));
const headerOf = (challenge: Challenge) =>
  JSON.parse(Buffer.from(challenge.header!, 'base64').toString('utf8'));

describe('a v2 challenge', () => {
  it("names the resource with the route's description and media type", () => {
    const challenge = challengeOf({ description: 'fee report', mimeType: 'text/csv' });
    expect(bodyOf(challenge).resource).toEqual({
      url: 'https://a.example/x',
      description: 'fee report',
      mimeType: 'text/csv',
    });
    expect(Object.keys(bodyOf(challenge).resource)).toEqual(['url', 'description', 'mimeType']);
  });

  it('leaves the description out when the route has none', () => {
    expect(bodyOf(challengeOf({})).resource).toEqual({
      url: 'https://a.example/x',
      mimeType: 'application/json',
    });
    expect(bodyOf(challengeOf({ description: '' })).resource).not.toHaveProperty('description');
  });

  it('carries no extensions when the route declares none or an empty set', () => {
    for (const settings of [{}, { extensions: {} }, { extensions: {}, headerExtensions: {} }]) {
      const challenge = challengeOf(settings);
      expect(Object.keys(challenge.object)).toEqual(['x402Version', 'error', 'resource', 'accepts']);
      expect(bodyOf(challenge)).not.toHaveProperty('extensions');
      expect(headerOf(challenge)).toEqual(bodyOf(challenge));
    }
  });

  it('carries the same JSON in header and body when no header form is given', () => {
    const challenge = challengeOf({ extensions: { bazaar: { info: { a: 1 } } }, headerExtensions: {} });
    expect(Buffer.from(challenge.header!, 'base64').toString('utf8')).toBe(
      Buffer.from(challenge.body).toString('utf8'),
    );
    expect(bodyOf(challenge).extensions).toEqual({ bazaar: { info: { a: 1 } } });
  });

  it('carries a header form even when the body has no extensions', () => {
    const challenge = challengeOf({ headerExtensions: { bazaar: { info: {} } } });
    expect(bodyOf(challenge)).not.toHaveProperty('extensions');
    expect(headerOf(challenge).extensions).toEqual({ bazaar: { info: {} } });
  });
});

describe('a challenge body sent many times', () => {
  it('keeps its text when ASCII: adapters write that string, the same bytes', () => {
    const challenge = challengeOf({ description: 'fee report' });
    const text = Buffer.from(challenge.body).toString('latin1');
    expect(knownBodyText(challenge.body)).toBe(text);
    expect(sendableBody(challenge.body)).toBe(text);
    // Only that very body object: equal bytes elsewhere are not taken for it.
    expect(knownBodyText(Buffer.from(challenge.body))).toBeUndefined();
  });

  it('keeps no text for a body with other characters, which is sent as its bytes', () => {
    const challenge = challengeOf({ description: 'frais — rapport' });
    expect(knownBodyText(challenge.body)).toBeUndefined();
    const sendable = sendableBody(challenge.body);
    expect(Buffer.isBuffer(sendable)).toBe(true);
    expect(new Uint8Array(sendable as Buffer)).toEqual(new Uint8Array(challenge.body));
  });
});
