// Request targets on the three adapters, sent raw on real sockets: an absolute-form target is
// served as its origin-form, a #fragment is normalised on free routes and refused with 400 before
// any payment on paid ones, a paid path answers 405 with Allow to the methods it does not serve,
// and none of it gives a 5xx or an error-level log: the same answer on Express, Fastify and Koa.
import { decodeHeaderJson } from '@tollbooth/core';
import { TEST_PAYER, TEST_TX } from '@tollbooth/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FREE_BODIES,
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

/** The same raw request to every app: their answers by name. */
async function everywhere(
  method: string,
  target: string,
  extra: (app: TargetApp) => string[] = () => [],
  body = '',
) {
  const answers: Record<string, RawResponse> = {};
  for (const app of apps)
    answers[app.name] = await sendRaw(app.port, rawRequest(method, target, app.port, extra(app), body));
  return answers;
}

const statuses = (answers: Record<string, RawResponse>) =>
  Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.status]));
const same = (status: number) => ({ express: status, fastify: status, koa: status });
const errorCode = (answer: RawResponse) =>
  (JSON.parse(answer.body) as { error: { code: string } }).error.code;

describe('request targets on Express, Fastify and Koa', () => {
  it.each(Object.entries(FREE_BODIES))(
    'serves the free route %s from an absolute-form target and with a #fragment',
    async (path, body) => {
      for (const target of [
        `http://127.0.0.1${path}`,
        `http://any.example:8080${path}?x=1`,
        `${path}#section`,
      ]) {
        const answers = await everywhere('GET', target);
        expect(statuses(answers), target).toEqual(same(200));
        for (const answer of Object.values(answers)) expect(answer.body).toBe(body);
      }
      // Both at once: Fastify's router refuses it (400) before any hook runs; the others serve it.
      const both = await everywhere('GET', `http://h${path}#f`);
      expect(statuses(both)).toEqual({ express: 200, fastify: 400, koa: 200 });
    },
  );

  it('challenges an absolute-form target to a paid route as its origin-form, for the origin-form resource', async () => {
    const answers = await everywhere('GET', 'http://api.example/api/paid?x=1');
    expect(statuses(answers)).toEqual(same(402));
    for (const answer of Object.values(answers)) {
      expect(JSON.parse(answer.body).resource.url).toBe('http://api.example/api/paid');
    }
  });

  it('serves a paid absolute-form request once paid, on every adapter', async () => {
    for (const app of apps) {
      const answer = await sendRaw(
        app.port,
        rawRequest('GET', `http://127.0.0.1:${app.port}/api/paid`, app.port, [
          `PAYMENT-SIGNATURE: ${app.payment('GET /api/paid')}`,
        ]),
      );
      expect(answer.status, app.name).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ paid: true });
      expect(decodeHeaderJson(answer.headers['payment-response']!), app.name).toEqual({
        success: true,
        transaction: TEST_TX,
        network: 'eip155:8453',
        payer: TEST_PAYER,
      });
    }
  });

  it('refuses a #fragment on a paid route with 400 before any challenge or payment', async () => {
    for (const target of ['/api/paid#x', 'http://h/api/paid#x', '/api/priced/a#', '/api/paid?q=1#frag']) {
      const unpaid = await everywhere('GET', target);
      expect(statuses(unpaid), target).toEqual(same(400));
      for (const [name, answer] of Object.entries(unpaid)) {
        // Fastify's router refuses an absolute-form target with a fragment itself, in its own words.
        const refusedBy = name === 'fastify' && target.startsWith('http') ? 'FST_ERR_BAD_URL' : undefined;
        if (refusedBy) expect(JSON.parse(answer.body).code).toBe(refusedBy);
        else expect(errorCode(answer)).toBe('invalid_request_target');
        expect(answer.headers['payment-required']).toBeUndefined();
      }
    }
    const paid = await everywhere('GET', '/api/paid#x', (app) => [
      `PAYMENT-SIGNATURE: ${app.payment('GET /api/paid')}`,
    ]);
    expect(statuses(paid)).toEqual(same(400));
    for (const answer of Object.values(paid)) expect(answer.headers['payment-response']).toBeUndefined();
  });

  it('answers 405 with Allow to a method a paid path does not serve, even under a method-less price pattern', async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/api/paid', 'GET, HEAD'],
      ['PUT', '/api/paid', 'GET, HEAD'],
      ['DELETE', 'http://h/api/paid', 'GET, HEAD'],
      ['GET', '/api/priced/post', 'POST'],
      ['PUT', '/api/priced/post', 'POST'],
      ['PATCH', '/api/%70riced/post/', 'POST'],
    ];
    for (const [method, target, allow] of cases) {
      const answers = await everywhere(method, target);
      expect(statuses(answers), `${method} ${target}`).toEqual(same(405));
      for (const answer of Object.values(answers)) {
        expect(answer.headers['allow']).toBe(allow);
        expect(errorCode(answer)).toBe('method_not_allowed');
      }
    }
    // The method-less price pattern still prices every method where no other route stands.
    expect(statuses(await everywhere('PUT', '/api/priced/thing'))).toEqual(same(402));
  });

  it('refuses the asterisk-form target * with 400 invalid_request_target on every adapter, for any method but OPTIONS', async () => {
    for (const method of ['GET', 'HEAD', 'POST']) {
      const answers = await everywhere(method, '*');
      expect(statuses(answers), method).toEqual(same(400));
      if (method !== 'HEAD')
        for (const answer of Object.values(answers)) expect(errorCode(answer)).toBe('invalid_request_target');
    }
    // OPTIONS * asks about the server as a whole: the application's to answer, never a 400 here.
    for (const answer of Object.values(await everywhere('OPTIONS', '*'))) expect(answer.status).not.toBe(400);
  });

  it('never answers a malformed target with a 5xx nor logs it at error level', async () => {
    const targets = [
      '/%zz',
      '/api/%E0%A4%A',
      '/api/paid%',
      '/api/paid/%2e%2e/%2e%2e',
      '*',
      'http://h',
      'http://h?x',
      'http://[::1]/healthz',
      'http://user:pw@h/healthz',
      '//healthz',
      '/healthz/..%2f..%2f',
      '/api/priced/%00',
      '/api/paid?%zz=%',
    ];
    for (const target of targets) {
      const answers = await everywhere('GET', target);
      for (const [name, answer] of Object.entries(answers)) {
        expect(answer.status, `${name} GET ${target}`).toBeGreaterThanOrEqual(200);
        expect(answer.status, `${name} GET ${target}`).toBeLessThan(500);
      }
    }
    for (const app of apps) expect(app.errors, app.name).toEqual([]);
  });
});
