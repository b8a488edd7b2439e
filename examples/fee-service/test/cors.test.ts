// CORS on the fee service, on each framework through its real server, sent raw (Origin is a header
// a fetch client may not set): a preflight is answered 204 with the route's methods whatever the
// route (paid, free, unknown), never 402/404/405; every other answer — 200, 402, 400, 404, 405 —
// carries Access-Control-Allow-Origin and exposes the payment headers, the gate's merged in; a
// listed origin is echoed with Vary: Origin, another gets no Allow-Origin; no credentials ever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, sendRaw } from '../../../test/support/target-apps';
import { CORS_MAX_AGE_SECONDS } from '../src/http/cors';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';

const APP = 'https://app.example';
let simulator: MempoolSimulator;
const listed: Record<string, RunningFeeService> = {};
let anyOrigin: RunningFeeService;

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 7 });
  const env = {
    OBSERVATORY_ENABLED: 'false',
    // Nothing here is paid: an unreachable facilitator keeps the devnet out of this file.
    FACILITATOR_URL: 'http://127.0.0.1:9',
    PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  };
  for (const framework of FRAMEWORKS) {
    listed[framework] = await startTestService(
      { ...env, FRAMEWORK: framework, CORS_ORIGINS: `${APP}, http://localhost:5173` },
      { simulator },
    );
  }
  anyOrigin = await startTestService({ ...env, FRAMEWORK: 'koa' }, { simulator });
});
afterAll(async () => {
  for (const service of [...Object.values(listed), anyOrigin]) await service?.close();
  await simulator?.close();
  removeScratch();
});

const portOf = (service: RunningFeeService) => Number(new URL(service.url).port);
const send = (service: RunningFeeService, method: string, target: string, extra: string[] = []) =>
  sendRaw(portOf(service), rawRequest(method, target, portOf(service), extra));
const preflight = (service: RunningFeeService, path: string, method: string, origin = APP) =>
  send(service, 'OPTIONS', path, [
    `Origin: ${origin}`,
    `Access-Control-Request-Method: ${method}`,
    'Access-Control-Request-Headers: payment-signature, content-type',
  ]);
const listOf = (value: string | undefined) =>
  (value ?? '').split(',').map((name) => name.trim().toLowerCase());

describe.each(FRAMEWORKS)('CORS on the %s mount', (framework) => {
  it.each([
    ['/api/v1/fees/now', 'GET', 'GET, HEAD'],
    ['/api/v1/broadcast', 'POST', 'POST'],
    ['/api/v1/fees/preview', 'GET', 'GET, HEAD'],
    ['/healthz', 'GET', 'GET, HEAD'],
  ])('answers a preflight of %s with 204 and the methods served there (%s)', async (path, method, allow) => {
    const answer = await preflight(listed[framework]!, path, method);
    expect(answer.status).toBe(204);
    expect(answer.body).toBe('');
    expect(answer.headers['access-control-allow-origin']).toBe(APP);
    expect(answer.headers['access-control-allow-methods']).toBe(allow);
    expect(listOf(answer.headers['access-control-allow-headers'])).toEqual(
      expect.arrayContaining(['payment-signature', 'x-payment', 'sign-in-with-x', 'content-type']),
    );
    expect(answer.headers['access-control-max-age']).toBe(String(CORS_MAX_AGE_SECONDS));
    expect(listOf(answer.headers['vary'])).toContain('origin');
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    expect(answer.headers['payment-required']).toBeUndefined();
  });

  it('answers a preflight of an unknown path with 204 and no methods, not 404', async () => {
    const answer = await preflight(listed[framework]!, '/nowhere', 'GET');
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe(APP);
    expect(answer.headers['access-control-allow-methods']).toBeUndefined();
  });

  it.each([
    ['GET', '/api/v1/fees/now', 402],
    ['GET', '/api/v1/fees/preview', 200],
    ['GET', '/healthz', 200],
    ['GET', '/api/v1/fees/now#x', 400],
    ['PUT', '/api/v1/fees/now', 405],
    ['GET', '/nowhere', 404],
  ])('lets a listed origin read %s %s (%i) and its payment headers', async (method, target, status) => {
    const answer = await send(listed[framework]!, method, target, [`Origin: ${APP}`]);
    expect(answer.status).toBe(status);
    expect(answer.headers['access-control-allow-origin']).toBe(APP);
    expect(listOf(answer.headers['vary'])).toContain('origin');
    const exposed = listOf(answer.headers['access-control-expose-headers']);
    expect(exposed).toEqual(
      expect.arrayContaining([
        'payment-required',
        'payment-response',
        'x-payment-response',
        'retry-after',
        'x-transaction-id',
        'x-replaced-by',
      ]),
    );
    // The gate's own list merged with the service's, never repeated.
    expect(new Set(exposed).size).toBe(exposed.length);
    expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    if (status === 402) expect(answer.headers['payment-required']).toMatch(/^[A-Za-z0-9+/=]+$/);
  });

  it('gives an origin not listed no Allow-Origin, on a preflight or an answer, and still varies on Origin', async () => {
    const service = listed[framework]!;
    const refused = await preflight(service, '/api/v1/fees/now', 'GET', 'https://evil.example');
    expect(refused.status).toBe(204);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    const challenge = await send(service, 'GET', '/api/v1/fees/now', ['Origin: https://evil.example']);
    expect(challenge.status).toBe(402);
    expect(challenge.headers['access-control-allow-origin']).toBeUndefined();
    expect(listOf(challenge.headers['vary'])).toContain('origin');
    const local = await send(service, 'GET', '/api/v1/fees/preview', ['Origin: http://localhost:5173']);
    expect(local.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('leaves an OPTIONS that is no preflight to the application', async () => {
    const answer = await send(listed[framework]!, 'OPTIONS', '/api/v1/fees/now', [`Origin: ${APP}`]);
    expect(answer.status).not.toBe(204);
    expect(answer.status).toBeLessThan(500);
    expect(answer.headers['access-control-allow-methods']).toBeUndefined();
  });
});

describe('CORS with the default CORS_ORIGINS=*', () => {
  it('allows any origin with *, without Vary: Origin, on preflights and answers alike', async () => {
    const pre = await preflight(anyOrigin, '/api/v1/fees/now', 'GET', 'https://anyone.example');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-methods']).toBe('GET, HEAD');
    const challenge = await send(anyOrigin, 'GET', '/api/v1/fees/now', ['Origin: https://anyone.example']);
    expect(challenge.status).toBe(402);
    expect(challenge.headers['access-control-allow-origin']).toBe('*');
    expect(listOf(challenge.headers['vary'])).not.toContain('origin');
    const plain = await send(anyOrigin, 'GET', '/api/v1/fees/preview');
    expect(plain.headers['access-control-allow-origin']).toBe('*');
  });
});
