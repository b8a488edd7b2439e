// fee_service_payments_total on each framework, as the gate's lifecycle hooks report each request
// (onMatched, onChallenge, onReplay, onVerified, onFailed): the plain challenge, a refused payment,
// input the route's precondition refuses, a settled payment and the replay of its answer, a
// broadcast the node refuses after verification, and the rate limit, which answers before the
// gate. A free route is never counted.
import type { Devnet } from '@tollbooth/devnet';
import { startDevnet } from '@tollbooth/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { buildRawTx, faucetSpend, paymentScript } from './fixtures/raw-tx';
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
          RATE_LIMIT_MAX: '12',
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
      // A header that is no payment is refused as an invalid request (400), not as a payment.
      expect((await fetch(now, { headers: { 'payment-signature': 'not-a-payment' } })).status).toBe(400);
      const refused = await fetch(`${service.url}/api/v1/fees/landscape?x=1`);
      expect(refused.status).toBe(400);
      expect(refused.headers.get('payment-required')).toBeNull();
      const header = await signPayment(now, devnet.accounts.payers[index]!.privateKey);
      const otherAmount = Buffer.from(
        Buffer.from(header, 'base64').toString('utf8').replace('"amount":"1000"', '"amount":"999"'),
      ).toString('base64');
      expect((await fetch(now, { headers: { 'payment-signature': otherAmount } })).status).toBe(402);
      expect((await fetch(now, { headers: { 'payment-signature': header } })).status).toBe(200);
      expect((await fetch(now, { headers: { 'payment-signature': header } })).status).toBe(200);
      // Broadcasts the node refuses once their payment is verified (missing inputs, Core -25: 409;
      // a dust output, Core -26: 422): released, nothing charged — refused, never counted as an
      // uncertain settlement (an alert on uncertain must not fire on an ordinary refusal).
      const broadcast = `${service.url}/api/v1/broadcast`;
      const dust = [{ script: paymentScript(), value: 100n }];
      for (const [hex, status] of [
        [buildRawTx({ inputTxidByte: 0x70 + index }), 409],
        [faucetSpend(simulator.model, { output: 40 + index, outputs: dust }).hex, 422],
      ] as const) {
        const init = {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ hex }),
        };
        const signature = await signPayment(broadcast, devnet.accounts.payers[index]!.privateKey, init);
        const answer = await fetch(broadcast, {
          ...init,
          headers: { ...init.headers, 'payment-signature': signature },
        });
        expect(answer.status, await answer.text()).toBe(status);
        expect(answer.headers.get('payment-response')).toBeNull();
      }
      let limited = 0;
      for (let i = 0; i < 10 && limited === 0; i++) if ((await fetch(now)).status === 429) limited += 1;
      expect(limited).toBe(1);

      const counts = await payments(service);
      expect(counts).toEqual({
        // The unpaid request signPayment makes, then the ones until the limit: 1 + 1 + 1.
        '/api/v1/fees/now challenged': 3,
        '/api/v1/fees/now rejected': 1,
        '/api/v1/fees/now invalid_request': 1,
        '/api/v1/fees/landscape invalid_request': 1,
        '/api/v1/fees/now settled': 1,
        '/api/v1/fees/now replayed': 1,
        '/api/v1/fees/now rate_limited': 1,
        '/api/v1/broadcast challenged': 2,
        '/api/v1/broadcast refused': 2,
      });
    });
  },
);
