// The whole 402 response head of every paid route stays within 4 KB (nginx's default proxy buffer
// is 4 or 8 KB; a longer head answers 502), on each framework. The bazaar extension rides whole in
// the 402 body and in its header form in PAYMENT-REQUIRED. A route published paused answers 503
// without a challenge; its challenge is measured from the complete route table instead, with the
// head's other bytes as an active route's live head shows them.
import { decodeHeaderJson, type PaymentRequired } from '@tollbooth/core';
import { fetchResponseHead } from '@tollbooth/core/testing';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPaid } from '../src/resources/kit';
import { RESOURCES } from '../src/resources/registry';
import { buildTestRouteTable, declaredPublications } from '../src/resources/testing';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { buildRawTx } from './fixtures/raw-tx';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';
import { judgeNextBlock } from './support/observatory';

/** What docs/fee-service.md promises. */
const MAX_HEAD_BYTES = 4096;
const TXID = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b';

/** Every paid resource with example parameters its schema accepts, and a path under each price pattern. */
const PAID_PATHS: ReadonlyArray<readonly [method: string, path: string]> = [
  ...RESOURCES.filter(isPaid).map((resource) => {
    const path = resource.path.replace(':txid', TXID).replace(':hash_or_height', '170000');
    // The question must be in the chat's and the analyst's domain, or they refuse it with 422.
    const question = path.endsWith('/ai/chat') || path.endsWith('/analyst');
    return [resource.method, question ? `${path}?q=why%20are%20fees%20high` : path] as const;
  }),
  ['GET', '/api/v1/ai/anything-else'],
  ['GET', '/api/v1/fees/observatory/anything-else'],
  ['GET', '/api/v1/analyst/report'],
];

let devnet: Devnet;
let simulator: MempoolSimulator;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 0 }), startMempoolSimulator({ seed: 5 })]);
});

afterAll(async () => {
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

describe.each(FRAMEWORKS)('the 402 head on %s', (framework) => {
  let service: RunningFeeService;
  beforeAll(async () => {
    service = await startTestService({ FRAMEWORK: framework }, { devnet, simulator });
    // a scoreboard with nothing judged is not sold (404 no_data before any challenge)
    await judgeNextBlock(service, simulator);
  });
  afterAll(() => service?.close());

  it.each(PAID_PATHS)(`of %s %s is at most ${MAX_HEAD_BYTES} bytes`, async (method, path) => {
    const head = await fetchResponseHead(`${service.url}${path}`, {
      method,
      ...(method === 'POST'
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hex: buildRawTx() }) }
        : {}),
    });
    const live = service.gate.routes.match(method, path)!.route;
    if (live.availability === 'active') {
      expect(head.status).toBe(402);
      expect(head.header('payment-required')).toBeDefined();
      expect(head.bytes).toBeLessThanOrEqual(MAX_HEAD_BYTES);
      return;
    }
    expect(head.status).toBe(503);
    expect(head.header('payment-required')).toBeUndefined();
    // Paused here: its challenge from the complete table, plus the rest of the decision's live head.
    const decision = await fetchResponseHead(`${service.url}/api/v1/fees/now`);
    const overhead = decision.bytes - decision.header('payment-required')!.length;
    const complete = buildTestRouteTable({
      publications: declaredPublications('local'),
      baseUrl: service.baseUrl,
      terms: service.capabilities.payments!.terms,
    });
    for (const pattern of complete.routes)
      if (pattern.isPattern) complete.setAvailability(pattern.key, 'active');
    const route = complete.match(method, path)!.route;
    const header = route.challenge(route.resourceUrl(`${service.baseUrl}${path}`)).header!;
    expect(overhead + header.length).toBeLessThanOrEqual(MAX_HEAD_BYTES);
  });

  it('keeps the decision’s whole output schema in the 402 body and out of the header', async () => {
    const url = `${service.url}/api/v1/fees/now`;
    const response = await fetch(url);
    const body = (await response.json()) as PaymentRequired;
    const header = decodeHeaderJson(response.headers.get('payment-required')!) as PaymentRequired;
    const output = (challenge: PaymentRequired) =>
      JSON.stringify(
        (challenge.extensions!['bazaar'] as { schema: { properties: { output: unknown } } }).schema.properties
          .output,
      );
    expect(output(body)).toContain('fee_rates_sat_vb');
    expect(output(header)).not.toContain('fee_rates_sat_vb');
    expect(header.accepts).toEqual(body.accepts);
  });
});
