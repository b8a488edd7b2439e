// fee_service_payments_total on each framework, as the gate's lifecycle hooks report each request
// (onMatched, onChallenge, onReplay): the plain challenge, a refused payment, input the route's
// precondition refuses, a settled payment and the replay of its answer, and the rate limit, which
// answers before the gate. A free route is never counted.
import type { Devnet } from '@tollbooth/devnet';
import { startDevnet } from '@tollbooth/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, signPayment, startTestService } from './support/harness';

let devnet: Devnet;
let simulator: MempoolSimulator;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([
    startDevnet({ payers: 3 }),
    startMempoolSimulator({ scenario: 'calm', seed: 11 }),
  ]);
});

afterAll(async () => {
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

/** Every `fee_service_payments_total` series as `route outcome` → count. */
async function payments(service: RunningFeeService): Promise<Record<string, number>> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const [, route, outcome, value] of text.matchAll(
    /^fee_service_payments_total\{route="([^"]*)",outcome="([^"]*)"\} (\d+)$/gm,
  ))
    counts[`${route} ${outcome}`] = Number(value);
  return counts;
}

describe.each(FRAMEWORKS.map((framework, index) => ({ framework, index })))(
  'on $framework',
  ({ framework, index }) => {
    let service: RunningFeeService;

    beforeAll(async () => {
      service = await startTestService(
        {
          FRAMEWORK: framework,
          OBSERVATORY_ENABLED: 'false',
          RATE_LIMIT_MAX: '8',
          RATE_LIMIT_WINDOW_MS: '60000',
        },
        { devnet, simulator },
      );
    });
    afterAll(() => service?.close());

    it('counts each paid request by what the gate reported of it, and no free one', async () => {
      const now = `${service.url}/api/v1/fees/now`;
      expect((await fetch(`${service.url}/api/v1/fees/preview`)).status).toBe(200);
      expect((await fetch(now)).status).toBe(402);
      expect((await fetch(now, { headers: { 'payment-signature': 'not-a-payment' } })).status).toBe(402);
      const refused = await fetch(`${service.url}/api/v1/fees/landscape?x=1`);
      expect(refused.status).toBe(400);
      expect(refused.headers.get('payment-required')).toBeNull();
      const header = await signPayment(now, devnet.accounts.payers[index]!.privateKey);
      expect((await fetch(now, { headers: { 'payment-signature': header } })).status).toBe(200);
      expect((await fetch(now, { headers: { 'payment-signature': header } })).status).toBe(200);
      let limited = 0;
      for (let i = 0; i < 10 && limited === 0; i++) if ((await fetch(now)).status === 429) limited += 1;
      expect(limited).toBe(1);

      const counts = await payments(service);
      expect(counts).toEqual({
        // The unpaid request signPayment makes, then the ones until the limit: 1 + 1 + 2.
        '/api/v1/fees/now challenged': 4,
        '/api/v1/fees/now rejected': 1,
        '/api/v1/fees/landscape invalid_request': 1,
        '/api/v1/fees/now settled': 1,
        '/api/v1/fees/now replayed': 1,
        '/api/v1/fees/now rate_limited': 1,
      });
    });
  },
);
