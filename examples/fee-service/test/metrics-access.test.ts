// /metrics kept from the public, on each framework through its real server: METRICS_TOKEN asks
// every scrape for its bearer token (401 with WWW-Authenticate: Bearer otherwise); METRICS_PORT
// serves it on a listener of its own while the main port answers 404 there, whatever spelling
// the framework's router would take for it; both together ask the token on the metrics port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, sendRaw } from '../../../test/support/target-apps';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';

const TOKEN = 'metrics-0123456789abcdef';
let simulator: MempoolSimulator;
const withToken: Record<string, RunningFeeService> = {};
const withPort: Record<string, RunningFeeService> = {};
let both: RunningFeeService;

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 9 });
  const env = {
    OBSERVATORY_ENABLED: 'false',
    FACILITATOR_URL: 'http://127.0.0.1:9',
    PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  };
  for (const framework of FRAMEWORKS) {
    withToken[framework] = await startTestService(
      { ...env, FRAMEWORK: framework, METRICS_TOKEN: TOKEN },
      { simulator },
    );
    withPort[framework] = await startTestService(
      { ...env, FRAMEWORK: framework, METRICS_PORT: '0' },
      { simulator },
    );
  }
  // Another loopback address than the main port's: the listener binds METRICS_HOST.
  both = await startTestService(
    { ...env, METRICS_PORT: '0', METRICS_HOST: '127.0.0.2', METRICS_TOKEN: TOKEN },
    { simulator },
  );
});
afterAll(async () => {
  for (const service of [...Object.values(withToken), ...Object.values(withPort), both])
    await service?.close();
  await simulator?.close();
  removeScratch();
});

const scrape = (url: string, authorization?: string) =>
  fetch(url, authorization === undefined ? {} : { headers: { authorization } });
const METRIC_LINE = /^# TYPE fee_service_http_requests_total counter$/m;

describe.each(FRAMEWORKS)('/metrics on the %s mount', (framework) => {
  it('asks for the bearer token: 401 with WWW-Authenticate without it or with another, 200 with it', async () => {
    const url = `${withToken[framework]!.url}/metrics`;
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789',
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
    ]) {
      const refused = await scrape(url, authorization);
      expect(refused.status, String(authorization)).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const body = (await refused.json()) as { error: { code: string } };
      expect(body.error.code).toBe('unauthorized');
    }
    const served = await scrape(url, `Bearer ${TOKEN}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await served.text()).toMatch(METRIC_LINE);
  });

  it('serves the metrics on their own port only: the main port answers 404 to every spelling of the path', async () => {
    const service = withPort[framework]!;
    expect(service.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(service.metricsUrl!).port).not.toBe(new URL(service.url).port);
    const served = await scrape(service.metricsUrl!);
    expect(served.status).toBe(200);
    expect(await served.text()).toMatch(METRIC_LINE);
    const port = Number(new URL(service.url).port);
    for (const target of [
      '/metrics',
      '/metrics/',
      '/METRICS',
      '/metrics?x=1',
      `http://127.0.0.1:${port}/metrics`,
    ]) {
      const answer = await sendRaw(port, rawRequest('GET', target, port));
      expect(answer.status, target).toBe(404);
      expect(answer.body, target).not.toMatch(METRIC_LINE);
    }
  });
});

describe('the metrics listener', () => {
  it('listens on METRICS_HOST, answers only GET and HEAD of /metrics, and asks the token when both are set', async () => {
    const url = both.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/metrics$/);
    expect(new URL(both.url).hostname).toBe('127.0.0.1');
    expect((await scrape(url)).status).toBe(401);
    const served = await scrape(url, `Bearer ${TOKEN}`);
    expect(served.status).toBe(200);
    expect(await served.text()).toMatch(METRIC_LINE);
    const head = await fetch(url, { method: 'HEAD', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(head.status).toBe(200);
    const other = await fetch(url.replace(/\/metrics$/, '/healthz'));
    expect(other.status).toBe(404);
    const post = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    // The main port keeps its routes and answers 404 at /metrics.
    expect((await fetch(`${both.url}/healthz`)).status).toBe(200);
    expect((await scrape(`${both.url}/metrics`, `Bearer ${TOKEN}`)).status).toBe(404);
  });
});
