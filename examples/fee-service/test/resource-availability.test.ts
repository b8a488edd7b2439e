// RESOURCE_AVAILABILITY, the operator's word on a paid resource over the profile's
// (docs/production.md#the-decision-paused-until-you-sell-it): the decision, paused in the production
// profile as the contract publishes it, made active and paid by the official client; other
// resources paused or retired; a path no paid resource has, or a resource made active that
// cannot be delivered, refused at start with every such problem.
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { assertFeeDecision } from './support/contract-schemas';
import { type JsonBody, removeScratch, startTestService } from './support/harness';

let devnet: Devnet;
let simulator: MempoolSimulator;
const services: RunningFeeService[] = [];

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 1 }), startMempoolSimulator({ seed: 13 })]);
});

afterAll(async () => {
  await Promise.all(services.map((service) => service.close()));
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

async function serve(env: Record<string, string>): Promise<RunningFeeService> {
  const service = await startTestService({ OBSERVATORY_ENABLED: 'false', ...env }, { devnet, simulator });
  services.push(service);
  return service;
}

const catalogPaths = async (service: RunningFeeService) =>
  ((await (await fetch(`${service.url}/discovery/resources`)).json()) as JsonBody)['items'].map(
    (item: { resource: string }) => new URL(item.resource).pathname,
  ) as string[];

describe('RESOURCE_AVAILABILITY', () => {
  it('sells the decision in the production profile once the operator makes it active', async () => {
    const paused = await serve({ PROFILE: 'production' });
    const refused = await fetch(`${paused.url}/api/v1/fees/now`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('payment-required')).toBeNull();
    expect(((await refused.json()) as JsonBody)['error'].code).toBe('resource_paused');
    expect(await catalogPaths(paused)).not.toContain('/api/v1/fees/now');

    const active = await serve({ PROFILE: 'production', RESOURCE_AVAILABILITY: '/api/v1/fees/now=active' });
    expect(active.publications.find((p) => p.resource.path === '/api/v1/fees/now')?.availability).toBe(
      'active',
    );
    expect((await fetch(`${active.url}/api/v1/fees/now`)).status).toBe(402);
    expect(await catalogPaths(active)).toContain('/api/v1/fees/now');
    const payer = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(payer)));
    const paid = await pay(`${active.url}/api/v1/fees/now`);
    expect(paid.status).toBe(200);
    assertFeeDecision(await paid.json());
  });

  it('pauses and retires other paid resources, path parameters written either way', async () => {
    const service = await serve({
      RESOURCE_AVAILABILITY:
        '/api/v1/ai/chat=paused, /api/v1/broadcast=retired,/api/v1/ai/explain/transaction/{txid}=paused',
    });
    const chat = await fetch(`${service.url}/api/v1/ai/chat?q=fees`);
    expect(chat.status).toBe(503);
    expect(chat.headers.get('retry-after')).not.toBeNull();
    expect(chat.headers.get('payment-required')).toBeNull();
    const explain = await fetch(`${service.url}/api/v1/ai/explain/transaction/${'ab'.repeat(32)}`);
    expect(explain.status).toBe(503);
    const broadcast = await fetch(`${service.url}/api/v1/broadcast`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hex: '00' }),
    });
    expect(broadcast.status).toBe(410);
    // Still for sale: the rest, and the decision (the local profile's).
    expect((await fetch(`${service.url}/api/v1/mining/nextblock`)).status).toBe(402);
    const known = (await (await fetch(`${service.url}/.well-known/x402`)).json()) as JsonBody;
    const pausedEndpoints = known['pausedEndpoints'] as Array<{ resource?: string; reason?: string }>;
    expect(JSON.stringify(pausedEndpoints)).toContain('by the operator (RESOURCE_AVAILABILITY)');
  });

  it('refuses at start a path no paid resource has, and a resource that cannot be active here', async () => {
    await expect(
      serve({
        RESOURCE_AVAILABILITY: '/api/v1/fees/nope=active,/api/v1/fees/observatory/scoreboard=active',
      }),
    ).rejects.toThrow(
      /RESOURCE_AVAILABILITY: no paid resource at \/api\/v1\/fees\/nope \(the paths: \/api\/v1\/fees\/now, [^)]*\/api\/v1\/analyst\)\n- RESOURCE_AVAILABILITY: \/api\/v1\/fees\/observatory\/scoreboard cannot be active here: needs history \(not configured\)/,
    );
  });

  it('refuses a malformed value with the other configuration problems', () => {
    expect(() =>
      loadConfig({
        RESOURCE_AVAILABILITY: '/api/v1/fees/now=on,/api/v1/fees/now=active,/api/v1/fees/now=paused',
        PAY_TO: '0xYourAddress',
      }),
    ).toThrow(
      /RESOURCE_AVAILABILITY: "\/api\/v1\/fees\/now=on" is not <path>=active, paused or retired[\s\S]*RESOURCE_AVAILABILITY: \/api\/v1\/fees\/now is named twice[\s\S]*PAY_TO/,
    );
    expect(
      loadConfig({ RESOURCE_AVAILABILITY: '/api/v1/ai/explain/block/{hash_or_height}=retired' }),
    ).toMatchObject({
      resourceAvailability: { '/api/v1/ai/explain/block/:hash_or_height': 'retired' },
    });
  });
});
