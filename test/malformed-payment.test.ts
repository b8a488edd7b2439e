// A malformed payment on the three adapters, sent raw on real sockets: a payment header that is
// not base64, not JSON, not a PaymentPayload, or a v2 payload without a required field answers
// 400 with the Error body and still the PAYMENT-REQUIRED challenge (the x402 HTTP transport's
// "Invalid Payment"), in PAYMENT-SIGNATURE and in the legacy X-PAYMENT alike; a well-formed payment
// that is refused stays 402 with a fresh challenge. The same answer on Express, Fastify and Koa.
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RawResponse,
  rawRequest,
  sendRaw,
  startTargetApps,
  type TargetApp,
} from './support/target-apps';

let apps: TargetApp[];

beforeAll(async () => {
  apps = await startTargetApps();
});
afterAll(async () => {
  await Promise.all(apps?.map((app) => app.close()) ?? []);
});

/** Changes a payment header's JSON and encodes it again. */
function mutated(header: string, change: (payment: Record<string, unknown>) => void): string {
  const payment = decodeHeaderJson(header) as Record<string, unknown>;
  change(payment);
  return encodeHeader(payment);
}

/** The malformed forms, one per code, the last two built from a real payment of the app. */
const MALFORMED: ReadonlyArray<readonly [what: string, value: (app: TargetApp) => string, code: string]> = [
  ['not base64', () => '!!!not-base64!!!', 'payment_header_invalid_base64'],
  [
    'base64 of text that is not JSON',
    () => Buffer.from('{not valid json').toString('base64'),
    'payment_header_invalid_json',
  ],
  ['JSON that is no PaymentPayload', () => encodeHeader({ hello: 'world' }), 'payment_payload_invalid'],
  [
    'a v2 payload without accepted',
    (app) => mutated(app.payment('GET /api/paid'), (p) => delete p['accepted']),
    'payment_payload_invalid',
  ],
  [
    'a v2 payload without payload',
    (app) => mutated(app.payment('GET /api/paid'), (p) => delete p['payload']),
    'payment_payload_invalid',
  ],
];

const send = (app: TargetApp, header: string, value: string) =>
  sendRaw(app.port, rawRequest('GET', '/api/paid', app.port, [`${header}: ${value}`]));

const challengeOf = (answer: RawResponse) =>
  decodeHeaderJson(answer.headers['payment-required'] ?? '') as PaymentRequired;

describe.each(['PAYMENT-SIGNATURE', 'X-PAYMENT'])('a malformed payment in %s', (header) => {
  it.each(MALFORMED)(
    '%s answers 400 with the Error body and the challenge on every adapter',
    async (_what, value, code) => {
      for (const app of apps) {
        const answer = await send(app, header, value(app));
        expect(answer.status, app.name).toBe(400);
        expect(answer.headers['content-type'], app.name).toMatch(/^application\/json/);
        const error = (JSON.parse(answer.body) as { error: Record<string, unknown> }).error;
        expect(error, app.name).toMatchObject({ code, retryable: false, request_id: expect.any(String) });
        const challenge = challengeOf(answer);
        expect(challenge, app.name).toMatchObject({ x402Version: 2, error: code });
        expect(challenge.accepts[0], app.name).toMatchObject({ amount: '1000', scheme: 'exact' });
        expect(answer.headers['access-control-expose-headers'], app.name).toContain('PAYMENT-REQUIRED');
        // The challenge is enough to pay: the app's own payment for it is served.
        expect((await send(app, header, app.payment('GET /api/paid'))).status, app.name).toBe(200);
      }
    },
  );
});

describe('a well-formed payment that is refused', () => {
  it.each([
    [
      'another amount',
      (p: Record<string, unknown>) => Object.assign(p['accepted'] as object, { amount: '999' }),
      'payment_amount_mismatch',
    ],
    [
      'a signature that does not verify',
      (p: Record<string, unknown>) => Object.assign(p['payload'] as object, { signature: '0xbad' }),
      'payment_signature_invalid',
    ],
  ] as const)(
    'with %s still answers 402 with a fresh challenge on every adapter',
    async (_what, change, code) => {
      for (const app of apps) {
        const answer = await send(app, 'PAYMENT-SIGNATURE', mutated(app.payment('GET /api/paid'), change));
        expect(answer.status, app.name).toBe(402);
        expect((JSON.parse(answer.body) as { error: string }).error, app.name).toBe(code);
        expect(challengeOf(answer).error, app.name).toBe(code);
      }
    },
  );
});
