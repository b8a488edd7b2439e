// The resource kit end to end: a resource added as one folder plus one line in the list of
// resources is published everywhere (route table, OpenAPI, catalog, /.well-known/x402) with no
// other edit; its input is refused before any challenge; a resource needing a capability this
// deployment lacks is published paused; the declared error codes reach OpenAPI.
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../src/resources/registry';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { echo, echoNeedingHistory } from './fixtures/resources/echo/resource';
import { assertErrorBody } from './support/contract-schemas';
import {
  balanceOf,
  challengeOf,
  type JsonBody,
  removeScratch,
  signPayment,
  startTestService,
} from './support/harness';

let devnet: Devnet;
let simulator: MempoolSimulator;
let service: RunningFeeService;

beforeAll(async () => {
  [devnet, simulator] = await Promise.all([startDevnet({ payers: 1 }), startMempoolSimulator({ seed: 11 })]);
  // Without the observatory, so a resource needing its history has a capability to lack.
  service = await startTestService(
    { OBSERVATORY_ENABLED: 'false' },
    { devnet, simulator, resources: [...RESOURCES, echo, echoNeedingHistory] },
  );
});

afterAll(async () => {
  await service?.close();
  await Promise.all([devnet?.stop(), simulator?.close()]);
  removeScratch();
});

const json = async (path: string) => (await (await fetch(`${service.url}${path}`)).json()) as JsonBody;

describe('a resource added as one folder and one registry line', () => {
  it('is in the route table, OpenAPI, the catalog and /.well-known/x402', async () => {
    const route = service.gate.routes.get('GET /api/v1/echo/:word');
    expect(route?.availability).toBe('active');
    expect(route?.requirements[0]).toMatchObject({ amount: '2000', maxTimeoutSeconds: 120 });

    const openapi = await json('/api/openapi.json');
    const operation = openapi['paths']['/api/v1/echo/{word}'].get;
    expect(operation.operationId).toBe('getEcho');
    expect(operation.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'path:word',
      'query:times',
    ]);
    expect(operation.responses['200'].content['application/json'].schema.properties.data).toBeDefined();
    expect(operation.responses['404']).toBeDefined();
    expect(operation['x-error-codes'].map((e: { code: string }) => e.code).sort()).toEqual([
      'invalid_request',
      'unknown_word',
    ]);
    expect(openapi['x-error-codes'].find((e: { code: string }) => e.code === 'unknown_word')).toMatchObject({
      status: 404,
      routes: ['GET /api/v1/echo/:word'],
    });

    const listing = await json('/discovery/resources');
    const item = listing['items'].find((i: { resource: string }) =>
      i.resource.endsWith('/api/v1/echo/{word}'),
    );
    expect(item.accepts[0]).toMatchObject({ amount: '2000', maxTimeoutSeconds: 120 });
    expect(item.accepts[0].outputSchema.output.properties.data).toBeDefined();

    const wellKnown = await json('/.well-known/x402');
    expect(wellKnown['resources']).toContain(`${service.baseUrl}/api/v1/echo/{word}`);
  });

  it('refuses input its schema rejects with 400 before any challenge, and challenges valid input', async () => {
    for (const target of [
      '/api/v1/echo/UPPER',
      '/api/v1/echo/word?times=9',
      '/api/v1/echo/word?x=1',
      '/api/v1/echo/word?times=1&times=2',
    ]) {
      const response = await fetch(`${service.url}${target}`);
      expect(response.status, target).toBe(400);
      expect(response.headers.get('payment-required'), target).toBeNull();
      const body = (await response.json()) as { error: { code: string; message: string } };
      assertErrorBody(body);
      expect(body.error.code).toBe('invalid_request');
    }
    const valid = await fetch(`${service.url}/api/v1/echo/word?times=2`);
    expect(valid.status).toBe(402);
    expect(challengeOf(valid).accepts[0]?.amount).toBe('2000');
  });

  it('serves valid input after payment, and never settles its own refusal', async () => {
    const payer = devnet.accounts.payers[0]!;
    const url = `${service.url}/api/v1/echo/word?times=2`;
    const before = await balanceOf(devnet, payer.address);
    const paid = await fetch(url, {
      headers: { 'payment-signature': await signPayment(url, payer.privateKey) },
    });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ data: { echo: 'wordword' } });
    expect(await balanceOf(devnet, payer.address)).toBe(before - 2000n);

    const unknown = `${service.url}/api/v1/echo/unknown`;
    const refused = await fetch(unknown, {
      headers: { 'payment-signature': await signPayment(unknown, payer.privateKey) },
    });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('payment-response')).toBeNull();
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('unknown_word');
    expect(await balanceOf(devnet, payer.address)).toBe(before - 2000n);
  });

  it('publishes a resource that needs an absent capability paused: 503 without a challenge, listed with the reason', async () => {
    const response = await fetch(`${service.url}/api/v1/echo-history`);
    expect(response.status).toBe(503);
    expect(response.headers.get('payment-required')).toBeNull();
    const wellKnown = await json('/.well-known/x402');
    const entry = wellKnown['pausedEndpoints'].find(
      (e: { pattern: string }) => e.pattern === '/api/v1/echo-history',
    );
    expect(entry.reason).toMatch(/^needs history \(/);
    expect(wellKnown['resources']).not.toContain(`${service.baseUrl}/api/v1/echo-history`);
    const listing = await json('/discovery/resources');
    expect(
      listing['items'].some((i: { resource: string }) => i.resource.endsWith('/api/v1/echo-history')),
    ).toBe(false);
  });
});
