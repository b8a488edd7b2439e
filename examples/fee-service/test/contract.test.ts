// The fee service's contract (docs/fee-service-contract.md) on every mount: the same tests against
// Fastify, Express and Koa, through real servers, a real chain (anvil devnet) and the real
// in-process facilitator. Bodies are checked with JSON Schemas written from the contract.
import { request as httpRequest } from 'node:http';
import { decodeHeaderJson } from '@tollbooth/core';
import { type BazaarExtension, toHeaderBazaarExtension } from '@tollbooth/core/discovery';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createEvmPaymentSigner, createPayingClient } from '@tollbooth/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_USDC } from '../src/config';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { buildRawTx } from './fixtures/raw-tx';
import {
  assertErrorBody,
  assertFeeDecision,
  assertFeePreview,
  assertPaymentRequired,
} from './support/contract-schemas';
import {
  challengeOf,
  FRAMEWORKS,
  type JsonBody,
  removeScratch,
  signPayment,
  startTestService,
} from './support/harness';
import { judgeNextBlock } from './support/observatory';

const BASE_USDC = KNOWN_USDC['eip155:8453']!.asset;

/** The ten other paid resources of the contract (docs/fee-service-contract.md#other-paid-resources), in its order. */
const SEED_RESOURCES = [
  ['GET', '/api/v1/ai/explain/transaction/{txid}', '10000'],
  ['GET', '/api/v1/ai/explain/block/{hash_or_height}', '10000'],
  ['GET', '/api/v1/ai/fees/advice', '10000'],
  ['GET', '/api/v1/ai/chat', '10000'],
  ['POST', '/api/v1/broadcast', '10000'],
  ['GET', '/api/v1/mining/nextblock', '10000'],
  ['GET', '/api/v1/fees/observatory/scoreboard', '5000'],
  ['GET', '/api/v1/fees/observatory/block-stats', '5000'],
  ['GET', '/api/v1/fees/observatory/estimates', '5000'],
  ['GET', '/api/v1/fees/landscape', '5000'],
] as const;

/** `/x/{id}` → `/x/:id`. */
const pathPattern = (path: string) => path.replace(/\{([a-z_]+)\}/g, ':$1');

/** A request every resource's input schema accepts: concrete path parameters, required query. */
function concreteRequest(method: string, path: string): [string, string] {
  const concrete = path
    .replace(':txid', '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b')
    .replace(':hash_or_height', '840000');
  const question = concrete.endsWith('/ai/chat') || concrete.endsWith('/analyst');
  return [method, question ? `${concrete}?q=why%20are%20fees%20high` : concrete];
}

/** A parsable signed transaction (one P2WPKH input, one output) for requests that need a body. */
const VALID_HEX = buildRawTx();

/** A GET with an exact request target and Host header (fetch normalises both). */
function rawGet(base: string, target: string, host?: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path: target, headers: host ? { host } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

let devnet: Devnet;
let calm: MempoolSimulator;
let down: MempoolSimulator;

beforeAll(async () => {
  [devnet, calm, down] = await Promise.all([
    startDevnet({ payers: 3 }),
    startMempoolSimulator({ scenario: 'calm', seed: 7 }),
    startMempoolSimulator({ scenario: 'upstream-down', seed: 7 }),
  ]);
});

afterAll(async () => {
  await Promise.all([devnet?.stop(), calm?.close(), down?.close()]);
  removeScratch();
});

describe.each(FRAMEWORKS.map((framework, index) => ({ framework, index })))(
  'on $framework',
  ({ framework, index }) => {
    let local: RunningFeeService;
    let production: RunningFeeService;
    let limited: RunningFeeService;
    let upstreamDown: RunningFeeService;
    let noFacilitator: RunningFeeService;
    let payerKey: Hex;

    beforeAll(async () => {
      payerKey = devnet.accounts.payers[index]!.privateKey;
      const base = { FRAMEWORK: framework };
      [local, production, limited, upstreamDown] = await Promise.all([
        startTestService({ ...base, FACILITATOR_SETTLE_TIMEOUT_MS: '1500' }, { devnet, simulator: calm }),
        startTestService({ ...base, PROFILE: 'production' }, { devnet, simulator: calm }),
        startTestService(
          { ...base, RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' },
          { devnet, simulator: calm },
        ),
        startTestService(base, { devnet, simulator: down }),
      ]);
      // A facilitator that cannot be reached (nothing listens on port 9 of loopback).
      noFacilitator = await startTestService(
        {
          ...base,
          FACILITATOR_URL: 'http://127.0.0.1:9',
          PAY_TO: devnet.accounts.payTo.address,
          FACILITATOR_TIMEOUT_MS: '1000',
        },
        { simulator: calm },
      );
    });

    afterAll(async () => {
      await Promise.all([local, production, limited, upstreamDown, noFacilitator].map((s) => s?.close()));
    });

    it('answers the free preview with every FeePreview field', async () => {
      const response = await fetch(`${local.url}/api/v1/fees/preview`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as JsonBody;
      assertFeePreview(body);
      expect(body['data'].paid_resource).toEqual({
        method: 'GET',
        path: '/api/v1/fees/now',
        price: '0.001 USDC',
        network: 'eip155:8453',
      });
      expect(body['meta']).toMatchObject({
        stale: false,
        snapshot_schema: 'mempool-space-fees-v1',
        source: calm.url,
      });
    });

    it('answers 402 with the decision payment terms in the body and the PAYMENT-REQUIRED header', async () => {
      const response = await fetch(`${local.url}/api/v1/fees/now`);
      expect(response.status).toBe(402);
      const body = await response.json();
      assertPaymentRequired(body);
      const challenge = challengeOf(response);
      // The same PaymentRequired, except the bazaar extension: whole in the body, lighter in the header.
      const { extensions: bodyExtensions, ...bodyRest } = body as typeof challenge;
      const { extensions: headerExtensions, ...headerRest } = challenge;
      expect(headerRest).toEqual(bodyRest);
      expect(headerExtensions?.['bazaar']).toEqual(
        toHeaderBazaarExtension(bodyExtensions?.['bazaar'] as BazaarExtension),
      );
      expect(challenge.resource.url).toBe(`${local.baseUrl}/api/v1/fees/now`);
      expect(challenge.accepts).toHaveLength(1);
      expect(challenge.accepts[0]).toMatchObject({
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '1000',
        asset: BASE_USDC,
        payTo: devnet.accounts.payTo.address,
        maxTimeoutSeconds: 60,
      });
      expect(challenge.extensions?.['bazaar']).toBeDefined();
    });

    it('answers 400 to a query string, another host or a non-canonical path, before any challenge', async () => {
      const response = await fetch(`${local.url}/api/v1/fees/now?fresh=1`);
      expect(response.status).toBe(400);
      expect(response.headers.get('payment-required')).toBeNull();
      const body = (await response.json()) as { error: { code: string } };
      assertErrorBody(body);
      expect(body.error.code).toBe('non_canonical_request');

      const port = new URL(local.url).port;
      for (const [target, host] of [
        ['/api/v1/fees/now?', undefined],
        ['/api/v1/fees/now', `localhost:${port}`],
        ['/api/v1/fees/%6Eow', undefined],
        ['/api/v1//fees/now', undefined],
      ] as const) {
        const answer = await rawGet(local.url, target, host);
        expect(answer.status, `${target} ${host ?? ''}`).toBe(400);
        assertErrorBody(JSON.parse(answer.body));
      }
    });

    it('pays, settles first and answers the FeeDecision with the real settlement in meta.payment', async () => {
      const before = await devnet.balanceOf(devnet.accounts.payTo.address);
      const client = createPayingClient({
        signer: createEvmPaymentSigner({ account: privateKeyToAccount(payerKey) }),
        maxAmountPerPayment: 1000n,
      });
      const { response, receipt } = await client.pay(`${local.url}/api/v1/fees/now`);
      expect(response.status).toBe(200);
      const decision = (await response.json()) as JsonBody;
      assertFeeDecision(decision);
      expect(receipt?.success).toBe(true);
      expect(decision['meta'].payment).toEqual({
        amount: '0.001',
        currency: 'USDC',
        facilitator: 'tollbooth',
        network: 'eip155:8453',
        transaction_hash: receipt!.transaction,
      });
      expect(decision['meta'].evidence).toBe('recorded');
      expect(await devnet.balanceOf(devnet.accounts.payTo.address)).toBe(before + 1000n);
      const onChain = await devnet.publicClient.getTransactionReceipt({ hash: receipt!.transaction as Hex });
      expect(onChain.status).toBe('success');
    });

    it('answers every paid resource as it is published: 402 with its price when active, 503 and no challenge when paused', async () => {
      const paid = production.publications.filter((p) => p.resource.price !== undefined);
      expect(paid.map((p) => p.key)).toEqual([
        'GET /api/v1/fees/now',
        ...SEED_RESOURCES.map(([method, path]) => `${method} ${pathPattern(path)}`),
        'GET /api/v1/analyst',
      ]);
      // something judged: a scoreboard with nothing judged is not sold (404 no_data, no challenge)
      await judgeNextBlock(production, calm);
      for (const { resource, availability } of paid) {
        const [method, path] = concreteRequest(resource.method, resource.path);
        const response = await fetch(`${production.url}${path}`, {
          method,
          ...(method === 'POST'
            ? { body: JSON.stringify({ hex: VALID_HEX }), headers: { 'content-type': 'application/json' } }
            : {}),
        });
        if (availability === 'active') {
          expect(response.status, `${method} ${path}`).toBe(402);
          const challenge = challengeOf(response);
          expect(challenge.accepts[0]).toMatchObject({
            amount: resource.price!.amount,
            asset: BASE_USDC,
            maxTimeoutSeconds: resource.price!.maxTimeoutSeconds,
          });
        } else {
          expect(response.status, `${method} ${path}`).toBe(503);
          expect(response.headers.get('payment-required')).toBeNull();
          const body = (await response.json()) as { error: { code: string } };
          assertErrorBody(body);
          expect(body.error.code).toBe('resource_paused');
        }
      }
    });

    it('lists what it cannot sell under pausedEndpoints, with the reason, and leaves it out of the catalog', async () => {
      const wellKnown = (await (await fetch(`${production.url}/.well-known/x402`)).json()) as JsonBody;
      const paused = production.publications.filter((p) => p.availability !== 'active');
      expect(
        wellKnown['pausedEndpoints'].map(
          (e: { method: string; pattern: string }) => `${e.method} ${e.pattern}`,
        ),
      ).toEqual(paused.map((p) => `${p.resource.method} ${p.resource.path.replace(/:([a-z_]+)/g, '{$1}')}`));
      for (const entry of wellKnown['pausedEndpoints'] as Array<{ reason: string; resource: string }>) {
        expect(entry.reason.length).toBeGreaterThan(0);
        expect(wellKnown['resources']).not.toContain(entry.resource);
      }
      const decision = wellKnown['pausedEndpoints'].find(
        (e: { pattern: string }) => e.pattern === '/api/v1/fees/now',
      );
      expect(decision.reason).toBe('paused in the production profile');
      const listing = (await (await fetch(`${production.url}/discovery/resources`)).json()) as JsonBody;
      const listed = (listing['items'] as Array<{ resource: string }>).map((item) => item.resource);
      for (const entry of wellKnown['pausedEndpoints'] as Array<{ resource: string }>) {
        expect(listed).not.toContain(entry.resource);
      }
    });

    it('answers 503 without a challenge while the decision is paused (production profile)', async () => {
      const response = await fetch(`${production.url}/api/v1/fees/now`);
      expect(response.status).toBe(503);
      expect(response.headers.get('payment-required')).toBeNull();
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      const body = (await response.json()) as { error: { code: string; retryable: boolean } };
      assertErrorBody(body);
      expect(body.error.code).toBe('resource_paused');
    });

    it('serves the catalog, the well-known document and OpenAPI from the route table', async () => {
      const activePaid = (service: RunningFeeService) =>
        service.publications
          .filter(
            (p) =>
              p.resource.price !== undefined &&
              p.availability === 'active' &&
              p.resource.discovery.listed !== false,
          )
          .map((p) => `${service.baseUrl}${p.resource.path.replace(/:([a-z_]+)/g, '{$1}')}`);
      const listing = (await (await fetch(`${production.url}/discovery/resources`)).json()) as JsonBody;
      expect(listing['x402Version']).toBe(2);
      expect(listing['pagination']).toEqual({ limit: 100, offset: 0, total: activePaid(production).length });
      const resources = (listing['items'] as Array<{ resource: string }>).map((item) => item.resource);
      expect(resources).toEqual(activePaid(production));
      expect(resources).not.toContain(`${production.baseUrl}/api/v1/fees/now`);
      const localListing = (await (await fetch(`${local.url}/discovery/resources`)).json()) as JsonBody;
      expect(localListing['pagination'].total).toBe(activePaid(local).length);
      expect(activePaid(local)).toContain(`${local.baseUrl}/api/v1/fees/now`);

      const wellKnown = (await (await fetch(`${production.url}/.well-known/x402`)).json()) as JsonBody;
      expect(wellKnown['x402']).toBe(true);
      expect(wellKnown['resources']).toEqual(activePaid(production));
      expect(wellKnown['facilitator']).toEqual({ url: production.facilitatorUrl });

      const openapi = (await (await fetch(`${production.url}/api/openapi.json`)).json()) as JsonBody;
      expect(openapi['openapi']).toBe('3.1.0');
      expect(openapi['paths']['/api/v1/fees/preview'].get.operationId).toBe('getFeePreview');
      expect(openapi['paths']['/api/v1/fees/now'].get.operationId).toBe('getFeeTimingDecision');
    });

    it('answers 429 with an empty body once the edge rate limit is reached, before the gate', async () => {
      const statuses: number[] = [];
      let lastBody = 'unread';
      for (let i = 0; i < 3; i += 1) {
        const response = await fetch(`${limited.url}/api/v1/fees/now`);
        statuses.push(response.status);
        lastBody = await response.text();
      }
      expect(statuses).toEqual([402, 402, 429]);
      expect(lastBody).toBe('');
      // Free endpoints are not limited.
      for (let i = 0; i < 4; i += 1) {
        expect((await fetch(`${limited.url}/api/v1/fees/preview`)).status).toBe(200);
      }
    });

    it('answers the preview and the decision with 503 Error when no validated snapshot exists', async () => {
      const preview = await fetch(`${upstreamDown.url}/api/v1/fees/preview`);
      expect(preview.status).toBe(503);
      const previewBody = (await preview.json()) as { error: { code: string; retryable: boolean } };
      assertErrorBody(previewBody);
      expect(previewBody.error).toMatchObject({ code: 'no_validated_snapshot', retryable: true });

      const decision = await fetch(`${upstreamDown.url}/api/v1/fees/now`);
      expect(decision.status).toBe(503);
      expect(decision.headers.get('payment-required')).toBeNull();
      assertErrorBody(await decision.json());
    });

    it('answers 503 without charging when the facilitator cannot be reached', async () => {
      const url = `${noFacilitator.url}/api/v1/fees/now`;
      const header = await signPayment(url, payerKey);
      const response = await fetch(url, { headers: { 'payment-signature': header } });
      expect(response.status).toBe(503);
      const body = (await response.json()) as { error: { code: string } };
      assertErrorBody(body);
      expect(body.error.code).toBe('facilitator_unavailable');
    });

    it('answers 502 with retry_exact_payment_payload when settlement is uncertain, and the same payload then gets the decision', async () => {
      const url = `${local.url}/api/v1/fees/now`;
      const header = await signPayment(url, payerKey);
      await devnet.setAutomine(false);
      let uncertain: Response;
      try {
        uncertain = await fetch(url, { headers: { 'payment-signature': header } });
      } finally {
        await devnet.setAutomine(true);
        await devnet.mine();
      }
      expect(uncertain.status).toBe(502);
      const body = (await uncertain.json()) as {
        error: { retryable: boolean; retry?: { instruction: string } };
      };
      assertErrorBody(body);
      expect(body.error.retryable).toBe(true);
      expect(body.error.retry).toEqual({ instruction: 'retry_exact_payment_payload' });

      const retried = await fetch(url, { headers: { 'payment-signature': header } });
      expect(retried.status).toBe(200);
      const decision = (await retried.json()) as JsonBody;
      assertFeeDecision(decision);
      const receipt = decodeHeaderJson(retried.headers.get('payment-response')!) as { transaction: string };
      expect(decision['meta'].payment.transaction_hash).toBe(receipt.transaction);
    });

    it('counts a transfer once and the replays of its stored answer apart', async () => {
      const count = async (pattern: RegExp) => {
        const text = await (await fetch(`${local.url}/metrics`)).text();
        return Number(pattern.exec(text)?.[1] ?? 0);
      };
      const transfers =
        /fee_service_payment_transfers_total\{route="GET \/api\/v1\/fees\/now",via="request"\} (\d+)/;
      const settled = /fee_service_payments_total\{route="\/api\/v1\/fees\/now",outcome="settled"\} (\d+)/;
      const replayed = /fee_service_payments_total\{route="\/api\/v1\/fees\/now",outcome="replayed"\} (\d+)/;
      const before = {
        transfers: await count(transfers),
        settled: await count(settled),
        replayed: await count(replayed),
      };
      const url = `${local.url}/api/v1/fees/now`;
      const header = await signPayment(url, payerKey);
      const first = await fetch(url, { headers: { 'payment-signature': header } });
      expect(first.status).toBe(200);
      const body = await first.text();
      for (let i = 0; i < 3; i++) {
        const again = await fetch(url, { headers: { 'payment-signature': header } });
        expect(again.status).toBe(200);
        expect(await again.text()).toBe(body);
      }
      expect(await count(transfers)).toBe(before.transfers + 1);
      expect(await count(settled)).toBe(before.settled + 1);
      expect(await count(replayed)).toBe(before.replayed + 3);
    });

    it('reports health, readiness and Prometheus metrics', async () => {
      expect((await fetch(`${local.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${local.url}/readyz`);
      expect(ready.status).toBe(200);
      const notReady = await fetch(`${upstreamDown.url}/readyz`);
      expect(notReady.status).toBe(503);
      expect(((await notReady.json()) as { checks: { snapshot: { ok: boolean } } }).checks.snapshot.ok).toBe(
        false,
      );
      const metrics = await (await fetch(`${local.url}/metrics`)).text();
      expect(metrics).toMatch(
        /fee_service_http_requests_total\{method="GET",route="\/api\/v1\/fees\/preview",status="200"\} [1-9]/,
      );
      expect(metrics).toMatch(
        /fee_service_payments_total\{route="\/api\/v1\/fees\/now",outcome="settled"\} [1-9]/,
      );
      expect(metrics).toMatch(/fee_service_snapshot_age_seconds \d/);
    });
  },
);
