// The fee observatory as `npm start` runs it: the service starts its own simulator in the past and
// records its chain up to now through the real dialects, so the official x402 client pays the
// three observatory resources and gets scored history on the first request, valid by the schemas
// the service publishes. Refusals are made before any challenge; a history that cannot be read
// answers 503 and is never settled.
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { assertErrorBody } from './support/contract-schemas';
import { balanceOf, type JsonBody, removeScratch, signPayment, startTestService } from './support/harness';

let devnet: Devnet;
let service: RunningFeeService;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

beforeAll(async () => {
  devnet = await startDevnet({ payers: 2 });
  // No simulator given: the service starts its own, 36 simulated hours ago, like `npm start`.
  service = await startTestService({}, { devnet });
}, 180_000);

afterAll(async () => {
  await service?.close();
  await devnet?.stop();
  removeScratch();
});

/** The 200 schema the service publishes for a path in its OpenAPI document. */
async function publishedSchema(path: string) {
  const openapi = (await (await fetch(`${service.url}/api/openapi.json`)).json()) as JsonBody;
  return openapi['paths'][path].get.responses['200'].content['application/json'].schema;
}

async function payWithOfficialClient(
  path: string,
): Promise<{ status: number; body: JsonBody; receipt: string | null }> {
  const payer = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
  const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(payer)));
  const response = await pay(`${service.url}${path}`);
  return {
    status: response.status,
    body: (await response.json()) as JsonBody,
    receipt: response.headers.get('payment-response'),
  };
}

describe('the observatory on a service started like npm start', () => {
  it('ran the simulated chain forward at start-up: a day and more of blocks, recorded through the dialects', () => {
    const run = service.observatory?.history_run;
    expect(run?.blocks).toBeGreaterThanOrEqual(144);
    expect(
      service.publications.filter((p) => p.key.includes('/observatory/')).map((p) => p.availability),
    ).toEqual(['active', 'active', 'active']);
  });

  it('the official @x402/fetch client pays the scoreboard and gets ranked rows for every horizon', async () => {
    const payer = devnet.accounts.payers[0]!.address;
    const before = await balanceOf(devnet, payer);
    const { status, body, receipt } = await payWithOfficialClient(
      '/api/v1/fees/observatory/scoreboard?hours=48',
    );
    expect(status).toBe(200);
    expect(receipt).not.toBeNull();
    expect(await balanceOf(devnet, payer)).toBe(before - 5000n);
    const validate = ajv.compile(await publishedSchema('/api/v1/fees/observatory/scoreboard'));
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    const rows = body['data']['rows'] as JsonBody[];
    // mempool.space's four tiers, Esplora and Core in two modes on seven targets
    expect(body['data']['horizons']).toEqual([1, 2, 3, 6, 12, 24, 144]);
    expect(rows).toHaveLength(4 + 3 * 7);
    for (const target of [1, 3, 6]) {
      const horizon = rows.filter((r) => r['target'] === target);
      expect(horizon.map((r) => r['rank'])).toEqual([1, 2, 3, 4]);
      for (const row of horizon) expect(row['n']).toBeGreaterThan(50);
      // ranked by cost within the horizon
      const costs = horizon.map((r) => r['cost'] as number);
      expect([...costs].sort((a, b) => a - b)).toEqual(costs);
    }
    // the simulated sources disagree: at the next block their hit rates spread widely
    const next = rows.filter((r) => r['target'] === 1).map((r) => r['hit_rate'] as number);
    expect(Math.max(...next) - Math.min(...next)).toBeGreaterThan(0.3);
  });

  it('pays block-stats and pages the recorded blocks newest first', async () => {
    const first = await payWithOfficialClient('/api/v1/fees/observatory/block-stats?limit=100');
    expect(first.status).toBe(200);
    const validate = ajv.compile(await publishedSchema('/api/v1/fees/observatory/block-stats'));
    expect(validate(first.body), JSON.stringify(validate.errors)).toBe(true);
    const blocks = first.body['data']['blocks'] as JsonBody[];
    expect(blocks).toHaveLength(100);
    expect(blocks[0]!['height']).toBe(first.body['meta']['tip_height']);
    expect(blocks.map((b) => b['height'])).toEqual(blocks.map((_, i) => blocks[0]!['height'] - i));
    for (const b of blocks) expect(b['p10']).toBeLessThanOrEqual(b['p75']);
    const next = first.body['data']['next_before'] as number;
    const second = await payWithOfficialClient(
      `/api/v1/fees/observatory/block-stats?limit=1000&before=${next}`,
    );
    expect(second.status).toBe(200);
    expect((second.body['data']['blocks'] as JsonBody[])[0]!['height']).toBe(next - 1);
    expect(100 + (second.body['data']['blocks'] as JsonBody[]).length).toBe(
      first.body['meta']['recorded_blocks'],
    );
  });

  it('pays estimates, filtered by source and target, judged, with a cursor to the next page', async () => {
    const path = '/api/v1/fees/observatory/estimates?source=core-economical&target=6&limit=20';
    const first = await payWithOfficialClient(path);
    expect(first.status).toBe(200);
    const validate = ajv.compile(await publishedSchema('/api/v1/fees/observatory/estimates'));
    expect(validate(first.body), JSON.stringify(validate.errors)).toBe(true);
    const rows = first.body['data']['estimates'] as JsonBody[];
    expect(rows).toHaveLength(20);
    for (const row of rows)
      expect(row).toMatchObject({ source: 'core-economical', target: 6, status: 'judged' });
    const cursor = first.body['data']['next_cursor'] as string;
    const second = await payWithOfficialClient(`${path}&cursor=${cursor}`);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const next = second.body['data']['estimates'] as JsonBody[];
    expect(next[0]!['id']).toBeGreaterThan(rows.at(-1)!['id']);
    expect(Date.parse(next[0]!['observed_at'])).toBeGreaterThanOrEqual(
      Date.parse(rows.at(-1)!['observed_at']),
    );
  });

  it('answers an empty window with 200, no rows and the reason', async () => {
    const { status, body } = await payWithOfficialClient(
      '/api/v1/fees/observatory/estimates?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z',
    );
    expect(status).toBe(200);
    expect(body['data']['estimates']).toEqual([]);
    expect(body['data']['empty_reason']).toMatch(/no estimate observed in this interval/);
  });

  it.each([
    ['/api/v1/fees/observatory/scoreboard?hours=721', 'invalid_request'],
    ['/api/v1/fees/observatory/scoreboard?hours=abc', 'invalid_request'],
    ['/api/v1/fees/observatory/scoreboard?window=5', 'invalid_request'],
    ['/api/v1/fees/observatory/block-stats?limit=0', 'invalid_request'],
    ['/api/v1/fees/observatory/block-stats?limit=1001', 'invalid_request'],
    ['/api/v1/fees/observatory/block-stats?before=-3', 'invalid_request'],
    ['/api/v1/fees/observatory/estimates?limit=10001', 'invalid_request'],
    ['/api/v1/fees/observatory/estimates?since=yesterday', 'invalid_request'],
    ['/api/v1/fees/observatory/estimates?source=Mempool%20Space', 'invalid_request'],
    [
      '/api/v1/fees/observatory/estimates?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z',
      'invalid_time_range',
    ],
    ['/api/v1/fees/observatory/estimates?cursor=bm90LWEtY3Vyc29y', 'invalid_cursor'],
  ])('refuses %s with 400 %s before any challenge, even carrying a valid payment', async (path, code) => {
    const payer = devnet.accounts.payers[1]!;
    const before = await balanceOf(devnet, payer.address);
    // a payment signed for the resource's valid request, sent with the invalid one
    const header = await signPayment(`${service.url}${path.split('?')[0]}`, payer.privateKey);
    const response = await fetch(`${service.url}${path}`, { headers: { 'payment-signature': header } });
    expect(response.status).toBe(400);
    expect(response.headers.get('payment-required')).toBeNull();
    const body = (await response.json()) as { error: { code: string } };
    assertErrorBody(body);
    expect(body.error.code).toBe(code);
    expect(await balanceOf(devnet, payer.address)).toBe(before);
  });

  // Last: it closes the history under the running service.
  it('answers 503 history_unavailable when its database cannot be read, and never settles it', async () => {
    await service.observatory!.recorder.stop();
    await service.observatory!.history.close();
    const payer = devnet.accounts.payers[1]!;
    const before = await balanceOf(devnet, payer.address);
    for (const path of [
      '/api/v1/fees/observatory/scoreboard',
      '/api/v1/fees/observatory/block-stats',
      '/api/v1/fees/observatory/estimates',
    ]) {
      const url = `${service.url}${path}`;
      const response = await fetch(url, {
        headers: { 'payment-signature': await signPayment(url, payer.privateKey) },
      });
      expect(response.status, path).toBe(503);
      expect(response.headers.get('payment-response')).toBeNull();
      const body = (await response.json()) as { error: { code: string; retryable: boolean } };
      expect(body.error).toMatchObject({ code: 'history_unavailable', retryable: true });
    }
    expect(await balanceOf(devnet, payer.address)).toBe(before);
  });
});
