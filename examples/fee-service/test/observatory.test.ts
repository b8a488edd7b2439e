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
import {
  entryRateMsat,
  FULL_BLOCK_WEIGHT,
  type Rejudged,
  recomputeRow,
  rejudge,
  type SoldBlock,
  type SoldEstimate,
  sameHistogramFigure,
} from './support/inclusion-rule';

let devnet: Devnet;
let service: RunningFeeService;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

beforeAll(async () => {
  devnet = await startDevnet({ payers: 2 });
  // No simulator given: the service starts its own, 36 simulated hours ago, like `npm start`.
  // Every case pays or is refused through the edge: more than its default 60 requests a minute.
  service = await startTestService({ RATE_LIMIT_MAX: '1000' }, { devnet });
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

  it('sells scores that the estimates and block-stats it sells recompute by the rule of docs/fee-rules.md', async () => {
    const board = await payWithOfficialClient('/api/v1/fees/observatory/scoreboard?hours=48');
    const { from, to } = board.body['data']['window'];
    const stats = await payWithOfficialClient('/api/v1/fees/observatory/block-stats?limit=1000');
    const sold = await payWithOfficialClient(
      `/api/v1/fees/observatory/estimates?since=${from}&until=${to}&limit=10000`,
    );
    expect([board.status, stats.status, sold.status]).toEqual([200, 200, 200]);
    expect(sold.body['data']['next_cursor']).toBeNull();
    const blocks = new Map<number, SoldBlock>(
      (stats.body['data']['blocks'] as SoldBlock[]).map((b) => [b.height, b]),
    );
    // each block's published verdict fields follow from its weight, p10 and relay minimum
    for (const block of blocks.values()) {
      expect(block.full).toBe(block.weight >= FULL_BLOCK_WEIGHT);
      expect(Math.round(block.entry_rate * 1000)).toBe(entryRateMsat(block));
    }
    // every judgment, then every row, recomputed
    const byRow = new Map<string, Rejudged[]>();
    let relayMinimumQuotesWithRoom = 0;
    for (const estimate of sold.body['data']['estimates'] as SoldEstimate[]) {
      if (estimate.status !== 'judged') continue;
      const again = rejudge(estimate, blocks)!;
      expect(again, JSON.stringify(estimate)).toBeDefined();
      expect(estimate.judgment, JSON.stringify(estimate)).toMatchObject({
        hit: again.hit,
        first_fit: again.firstFit,
        overpay: again.overpay,
        overpayment_sats_140: again.overpaymentSats,
        entry_rate_sat_vb: again.entryMsat / 1000,
      });
      const key = `${estimate.target}:${estimate.source}`;
      byRow.set(key, [...(byRow.get(key) ?? []), again]);
      // a quote of the relay minimum for the next block, which then had room: would have been included
      const next = blocks.get(estimate.tip_height + 1)!;
      if (estimate.target === 1 && !next.full && estimate.rate_sat_vb === next.relay_minimum) {
        relayMinimumQuotesWithRoom += 1;
        expect(estimate.judgment!.hit, JSON.stringify(estimate)).toBe(true);
      }
    }
    expect(relayMinimumQuotesWithRoom).toBeGreaterThan(20);
    const rows = board.body['data']['rows'] as JsonBody[];
    expect(rows.length).toBe(byRow.size);
    for (const row of rows) {
      const again = recomputeRow(byRow.get(`${row['target']}:${row['source']}`)!);
      const label = `${row['source']} at ${row['target']}`;
      expect(row, label).toMatchObject({
        n: again.n,
        hit_rate: again.hit_rate,
        miss_rate: again.miss_rate,
        overpay_rate: again.overpay_rate,
      });
      expect(
        sameHistogramFigure(row['median_overpayment_sats_140'], again.median_overpayment_sats_140),
        label,
      ).toBe(true);
      expect(
        sameHistogramFigure(row['median_miss_entry_fee_sats_140'], again.median_miss_entry_fee_sats_140),
        label,
      ).toBe(true);
      expect(Math.abs(row['cost'] - again.cost), label).toBeLessThanOrEqual(0.016 * again.cost + 0.1);
    }
    // the next block: mempool.space, quoting what gets in, ranks above Core's conservative mode,
    // which hits more often by overpaying about tenfold
    const next = rows.filter((r) => r['target'] === 1);
    const rankOf = (source: string) => next.find((r) => r['source'] === source)!['rank'];
    expect(rankOf('mempool.space')).toBeLessThan(rankOf('core-conservative'));
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

  it.each([
    [
      '/api/v1/fees/observatory/estimates?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z',
      /no estimate observed in this interval/,
    ],
    [
      '/api/v1/fees/observatory/estimates?source=esplora&target=144&since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z',
      /no estimate of esplora for target 144 observed in this interval/,
    ],
    [
      '/api/v1/fees/observatory/block-stats?before=5',
      /no recorded block below height 5 \(the history holds \d+ … \d+\)/,
    ],
  ])(
    'does not sell %s, which has nothing: 404 no_data before any challenge, even carrying a valid payment',
    async (path, reason) => {
      const payer = devnet.accounts.payers[1]!;
      const before = await balanceOf(devnet, payer.address);
      const unpaid = await fetch(`${service.url}${path}`);
      expect(unpaid.status).toBe(404);
      expect(unpaid.headers.get('payment-required')).toBeNull();
      const header = await signPayment(`${service.url}${path.split('?')[0]}`, payer.privateKey);
      const response = await fetch(`${service.url}${path}`, { headers: { 'payment-signature': header } });
      expect(response.status).toBe(404);
      expect(response.headers.get('payment-response')).toBeNull();
      const body = (await response.json()) as { error: { code: string; message: string } };
      assertErrorBody(body);
      expect(body.error.code).toBe('no_data');
      expect(body.error.message).toMatch(reason);
      expect(await balanceOf(devnet, payer.address)).toBe(before);
    },
  );

  it('does not sell a scoreboard with nothing judged yet: a service started without history answers 404 no_data before any challenge', async () => {
    const fresh = await startTestService({ SIMULATOR_HISTORY_HOURS: '0' }, { devnet });
    try {
      const path = '/api/v1/fees/observatory/scoreboard';
      // before or after the recorder's first tick (it starts with the service)
      const empty = await fetch(`${fresh.url}${path}`);
      expect(empty.status).toBe(404);
      expect(((await empty.json()) as { error: { message: string } }).error.message).toMatch(
        /nothing recorded yet|has been judged yet/,
      );
      // one poll of every source: rows with polls, every estimate pending until its blocks come
      await fresh.observatory!.recorder.tick();
      await fresh.observatory!.observatory.refresh();
      const polled = await fetch(`${fresh.url}${path}`);
      expect(polled.status).toBe(404);
      expect(polled.headers.get('payment-required')).toBeNull();
      const body = (await polled.json()) as { error: { code: string; message: string } };
      assertErrorBody(body);
      expect(body.error).toMatchObject({ code: 'no_data' });
      expect(body.error.message).toMatch(/has been judged yet: an estimate is judged once the last block/);
    } finally {
      await fresh.close();
    }
  });

  it('lists a polled row with nothing judged unranked, after the ranked ones of its horizon', async () => {
    const { status, body } = await payWithOfficialClient('/api/v1/fees/observatory/scoreboard?hours=2');
    expect(status).toBe(200);
    const rows = body['data']['rows'] as JsonBody[];
    // in the last two hours the 144-block quotes are all pending: polled, none judged, not ranked
    const economy = rows.filter((r) => r['target'] === 144);
    expect(economy.length).toBeGreaterThan(0);
    for (const row of economy) expect(row).toMatchObject({ n: 0, rank: null, cost: null, hit_rate: null });
    expect(rows.filter((r) => r['target'] === 1).map((r) => r['rank'])).toEqual([1, 2, 3, 4]);
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
    ['/api/v1/fees/observatory/estimates?source=nope', 'unknown_source'],
    ['/api/v1/fees/observatory/estimates?target=7', 'unknown_target'],
    ['/api/v1/fees/observatory/estimates?source=mempool.space&target=2', 'unknown_target'],
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
    const payer = devnet.accounts.payers[1]!;
    const paths = [
      '/api/v1/fees/observatory/scoreboard',
      '/api/v1/fees/observatory/block-stats',
      '/api/v1/fees/observatory/estimates',
    ];
    // signed while the history answers (once it cannot be read, no challenge is issued)
    const signatures = await Promise.all(
      paths.map((path) => signPayment(`${service.url}${path}`, payer.privateKey)),
    );
    await service.observatory!.recorder.stop();
    await service.observatory!.history.close();
    const before = await balanceOf(devnet, payer.address);
    for (const [i, path] of paths.entries()) {
      const url = `${service.url}${path}`;
      const response = await fetch(url, { headers: { 'payment-signature': signatures[i]! } });
      expect(response.status, path).toBe(503);
      expect(response.headers.get('payment-response')).toBeNull();
      const body = (await response.json()) as { error: { code: string; retryable: boolean } };
      expect(body.error).toMatchObject({ code: 'history_unavailable', retryable: true });
    }
    expect(await balanceOf(devnet, payer.address)).toBe(before);
  });
});
