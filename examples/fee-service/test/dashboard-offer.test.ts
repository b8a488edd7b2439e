// The dashboard sells the decision, it does not give it away (docs/dashboard.md#what-it-shows):
// on the same snapshot as a paid GET /api/v1/fees/now, /dashboard/data and the page at / carry
// what the free preview shows (tiers, mempool, savings) and the offer (price, paywall link), and
// neither the decision nor any of its reason codes. In a sub-sat mempool (send, limited savings)
// and a backlogged one (wait, meaningful savings, heavy backlog), so both answers and all three
// reason codes are looked for; and paused in the production profile.
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REASON_CODES } from '../src/domain/constants';
import type { RunningFeeService } from '../src/service';
import type { ScenarioName } from '../src/simulator/scenarios';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { type JsonBody, removeScratch, signPayment, startTestService } from './support/harness';

let devnet: Devnet;
const simulators: MempoolSimulator[] = [];
const services: RunningFeeService[] = [];

beforeAll(async () => {
  devnet = await startDevnet({ payers: 2 });
});

afterAll(async () => {
  await Promise.all(services.map((service) => service.close()));
  await Promise.all([devnet?.stop(), ...simulators.map((simulator) => simulator.close())]);
  removeScratch();
});

async function serve(scenario: ScenarioName, env: Record<string, string> = {}) {
  // Frozen simulated time: every answer below reads the same snapshot.
  const simulator = await startMempoolSimulator({ scenario, seed: 17 });
  simulators.push(simulator);
  const service = await startTestService({ OBSERVATORY_ENABLED: 'false', ...env }, { devnet, simulator });
  services.push(service);
  return service;
}

/** Every key and every string value of a JSON document, however deep. */
function walk(
  value: unknown,
  keys: string[] = [],
  strings: string[] = [],
): { keys: string[]; strings: string[] } {
  if (typeof value === 'string') strings.push(value);
  else if (Array.isArray(value)) for (const item of value) walk(item, keys, strings);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      keys.push(key);
      walk(item, keys, strings);
    }
  }
  return { keys, strings };
}

describe('the free dashboard next to the paid decision', () => {
  it.each([
    ['sub-sat', 0, 'send'],
    ['backlog', 1, 'wait'],
  ] as const)(
    'in a %s mempool shows the preview and the offer, never the decision',
    async (scenario, payer, expected) => {
      const service = await serve(scenario);
      const url = `${service.url}/api/v1/fees/now`;
      const signature = await signPayment(url, devnet.accounts.payers[payer]!.privateKey);
      const paid = await fetch(url, { headers: { 'payment-signature': signature } });
      expect(paid.status).toBe(200);
      const decision = (await paid.json()) as JsonBody;
      expect(decision['data']['decision']).toBe(expected);
      const reasons = decision['data']['reason_codes'] as string[];

      const dashboard = (await (await fetch(`${service.url}/dashboard/data`)).json()) as JsonBody;
      const page = await (await fetch(`${service.url}/`)).text();
      const preview = (await (await fetch(`${service.url}/api/v1/fees/preview`)).json()) as JsonBody;
      // The same snapshot as the paid answer and the preview.
      expect(dashboard['snapshot']['digest']).toBe(decision['meta']['snapshot_digest']);
      expect(preview['meta']['snapshot_digest']).toBe(decision['meta']['snapshot_digest']);

      // Neither the decision nor a reason code, anywhere in the document or the page.
      const { keys, strings } = walk(dashboard);
      expect(keys).not.toContain('decision');
      expect(keys).not.toContain('reason_codes');
      expect(strings).not.toContain(expected);
      for (const code of [...REASON_CODES, ...reasons]) {
        expect(JSON.stringify(dashboard)).not.toContain(code);
        expect(page).not.toContain(code);
      }

      // What the preview shows stays free: tiers, mempool, savings (the decision's own figures).
      expect(dashboard['snapshot']['potential_savings']).toEqual(preview['data']['potential_savings']);
      expect(dashboard['snapshot']['potential_savings']).toEqual(decision['data']['potential_savings']);
      expect(
        Object.fromEntries(
          (dashboard['snapshot']['tiers'] as Array<{ tier: string; rate_sat_vb: number }>).map((t) => [
            t.tier,
            t.rate_sat_vb,
          ]),
        ),
      ).toEqual(preview['data']['fee_rates_sat_vb']);
      expect(dashboard['snapshot']['mempool']).toMatchObject({
        vsize: preview['data']['mempool']['vsize'],
        count: preview['data']['mempool']['transaction_count'],
        projected_block_count: preview['data']['mempool']['projected_block_count'],
      });

      // The offer: the price and where to pay, nothing of the answer.
      expect(dashboard['decision_offer']).toEqual({
        method: 'GET',
        path: '/api/v1/fees/now',
        price: '0.001 USDC',
        algorithm_version: 'send-wait-v1',
        availability: 'active',
        href: `${service.baseUrl}/api/v1/fees/now`,
      });

      expect(page).toContain(JSON.stringify(dashboard['decision_offer']).slice(1, 40));
    },
  );

  it('offers the decision as paused in the production profile, with the reason and no link', async () => {
    const service = await serve('calm', { PROFILE: 'production' });
    const dashboard = (await (await fetch(`${service.url}/dashboard/data`)).json()) as JsonBody;
    expect(dashboard['decision_offer']).toEqual({
      method: 'GET',
      path: '/api/v1/fees/now',
      price: '0.001 USDC',
      algorithm_version: 'send-wait-v1',
      availability: 'paused',
      reason: 'paused in the production profile',
    });
  });
});
