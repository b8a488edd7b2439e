// docs/fee-service.md#request-targets-and-methods lists requests and their answers in a table;
// each row is sent here, raw, to the fee service on Fastify, Express and Koa, and must be answered
// as written (status, Error code, Allow). The section's /readyz checks are the ones the service
// reports.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, sendRaw } from '../../../test/support/target-apps';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';

const doc = readFileSync(new URL('../../../docs/fee-service.md', import.meta.url), 'utf8');
const ROW = /^\| `([A-Z]+) ([^`]+)` +\| (\d{3})(?: `([a-z_]+)`)?(?:, `Allow: ([^`]+)`)? +\|$/;
const rows = doc
  .slice(doc.indexOf('## Request targets and methods'))
  .split('\n')
  .map((line) => ROW.exec(line))
  .filter((match) => match !== null)
  .map(([, method, target, status, code, allow]) => ({
    method: method!,
    target: target!,
    status: Number(status),
    code,
    allow,
  }));

let simulator: MempoolSimulator;
const services: Record<string, RunningFeeService> = {};

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 13 });
  for (const framework of FRAMEWORKS) {
    services[framework] = await startTestService(
      {
        FRAMEWORK: framework,
        OBSERVATORY_ENABLED: 'false',
        FACILITATOR_URL: 'http://127.0.0.1:9',
        PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      },
      { simulator },
    );
  }
});
afterAll(async () => {
  for (const service of Object.values(services)) await service.close();
  await simulator?.close();
  removeScratch();
});

it('reads the table of requests from the doc', () => {
  expect(rows.length).toBeGreaterThanOrEqual(7);
  expect(rows.some((row) => row.status === 405 && row.allow)).toBe(true);
});

describe.each(FRAMEWORKS)('docs/fee-service.md request targets on the %s mount', (framework) => {
  it('answers every request of the table as the doc says', async () => {
    const service = services[framework]!;
    const port = Number(new URL(service.url).port);
    for (const row of rows) {
      const target = row.target.replace('HOST', `127.0.0.1:${port}`);
      const answer = await sendRaw(port, rawRequest(row.method, target, port));
      const label = `${row.method} ${row.target}`;
      expect(answer.status, label).toBe(row.status);
      if (row.code) expect(JSON.parse(answer.body).error.code, label).toBe(row.code);
      expect(answer.headers['allow'], label).toBe(row.allow);
    }
  });
});

it('reports the /readyz checks the doc names', async () => {
  const answer = await fetch(`${services['fastify']!.url}/readyz`);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  const body = (await answer.json()) as { status: string; checks: Record<string, { ok: boolean }> };
  // The facilitator here does not answer: not ready, and the doc's check names are the keys.
  expect(answer.status).toBe(503);
  expect(body.status).toBe('not_ready');
  expect(Object.keys(body.checks).sort()).toEqual(['facilitator', 'snapshot']);
  expect(body.checks['facilitator']!.ok).toBe(false);
  const section = doc.slice(doc.indexOf('## Probes'), doc.indexOf('## Request targets and methods'));
  for (const check of Object.keys(body.checks)) expect(section).toContain(`\`${check}\``);
  expect(section).toContain('`chain:<network>`');
});
