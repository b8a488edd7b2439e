// Request targets on the fee service, on each framework, sent raw: absolute-form targets are
// served as their origin-form (the free routes, discovery and the probes included), a #fragment is
// refused with 400 on paid routes before any challenge, a paid path answers 405 with Allow to a
// method it does not serve (the AI price pattern included), a target the router cannot read gets
// a 4xx Error body and `GET *` 400 (Fastify served the dashboard); never a 5xx, never an error-level log.
import { type Logger, pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, sendRaw } from '../../../test/support/target-apps';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';

let simulator: MempoolSimulator;
const services: Record<string, RunningFeeService> = {};
const logged: Array<{ level: number; msg: string; err?: unknown }> = [];
const logger: Logger = pino(
  { level: 'warn' },
  { write: (line: string) => void logged.push(JSON.parse(line)) },
);

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 5 });
  for (const framework of FRAMEWORKS) {
    services[framework] = await startTestService(
      {
        FRAMEWORK: framework,
        OBSERVATORY_ENABLED: 'false',
        // Nothing here reaches a facilitator: an unreachable one keeps the devnet out of this file.
        FACILITATOR_URL: 'http://127.0.0.1:9',
        PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      },
      { simulator, logger },
    );
  }
});
afterAll(async () => {
  for (const service of Object.values(services)) await service.close();
  await simulator?.close();
  removeScratch();
});

const portOf = (service: RunningFeeService) => Number(new URL(service.url).port);
const send = (service: RunningFeeService, method: string, target: string, extra: string[] = []) =>
  sendRaw(portOf(service), rawRequest(method, target, portOf(service), extra));
const codeOf = (body: string) => {
  try {
    return (JSON.parse(body) as { error: { code: string } }).error.code;
  } catch {
    return undefined;
  }
};

describe.each(FRAMEWORKS)('request targets on the %s mount', (framework) => {
  it('serves the free routes, discovery and probes from an absolute-form target as from origin-form', async () => {
    const service = services[framework]!;
    for (const path of [
      '/healthz',
      '/.well-known/x402',
      '/discovery/resources',
      '/api/openapi.json',
      '/api/v1/fees/preview',
    ]) {
      const origin = await send(service, 'GET', path);
      expect(origin.status, path).toBe(200);
      for (const target of [`http://127.0.0.1:${portOf(service)}${path}`, `${path}#part`]) {
        const answer = await send(service, 'GET', target);
        expect(answer.status, target).toBe(200);
        expect(answer.headers['content-type'], target).toBe(origin.headers['content-type']);
      }
    }
  });

  it('refuses a #fragment on a paid route with 400 before any challenge', async () => {
    for (const target of [
      '/api/v1/fees/now#x',
      '/api/v1/fees/landscape#',
      `http://127.0.0.1:${portOf(services[framework]!)}/api/v1/fees/now#x`,
    ]) {
      const answer = await send(services[framework]!, 'GET', target);
      expect(answer.status, target).toBe(400);
      expect(codeOf(answer.body), target).toBe('invalid_request_target');
      expect(answer.headers['payment-required']).toBeUndefined();
    }
  });

  it('answers 405 with Allow to a method a paid path does not serve', async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/api/v1/fees/now', 'GET, HEAD'],
      ['DELETE', '/api/v1/fees/now', 'GET, HEAD'],
      ['PUT', '/api/v1/ai/fees/advice', 'GET, HEAD'],
      ['POST', '/api/v1/ai/fees/advice', 'GET, HEAD'],
      ['PUT', '/api/v1/broadcast', 'POST'],
    ];
    for (const [method, target, allow] of cases) {
      const answer = await send(services[framework]!, method, target);
      expect(answer.status, `${method} ${target}`).toBe(405);
      expect(answer.headers['allow'], `${method} ${target}`).toBe(allow);
      expect(codeOf(answer.body)).toBe('method_not_allowed');
      expect(answer.headers['payment-required']).toBeUndefined();
    }
  });

  it('refuses GET * with 400 invalid_request_target, never the dashboard', async () => {
    const answer = await send(services[framework]!, 'GET', '*');
    expect(answer.status).toBe(400);
    expect(codeOf(answer.body)).toBe('invalid_request_target');
    expect(answer.body).not.toContain('<html');
  });

  it('answers a target the router cannot read with a 4xx Error body, never a 5xx or an error log', async () => {
    for (const target of [
      '/%zz',
      '/api/v1/fees/%E0%A4%A',
      '/api/v1/ai/%',
      '*',
      'http://h/%zz#',
      '/healthz/..%2f..%2f',
      '/api/v1/fees/now?%zz',
      '/dashboard/assets/%~-_-.G',
      'OPTIONS /dashboard/assets/%zz',
      'http://h:99999/',
      'ftp://h:99999/healthz',
    ]) {
      const [method, path] = target.startsWith('OPTIONS ') ? ['OPTIONS', target.slice(8)] : ['GET', target];
      const answer = await send(services[framework]!, method, path);
      expect(answer.status, target).toBeGreaterThanOrEqual(200);
      expect(answer.status, target).toBeLessThan(500);
      // An Error body, or the challenge of the AI price pattern (`/api/v1/ai/%` is under it).
      if (answer.status === 402) expect(JSON.parse(answer.body).x402Version, target).toBe(2);
      else if (answer.status >= 400)
        expect(codeOf(answer.body), `${target} ${answer.status} ${answer.body}`).toMatch(/^[a-z_]+$/);
    }
    // A Host that is no authority: 400 before any URL is built from it (it was a 503 and an error log).
    for (const host of ['h:99999', 'a:b:c', '[::1']) {
      const service = services[framework]!;
      const answer = await sendRaw(
        portOf(service),
        `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer.status, host).toBe(400);
      expect(codeOf(answer.body), host).toBe('invalid_request');
    }
    expect(logged.filter((entry) => entry.level >= 50)).toEqual([]);
  });
});
