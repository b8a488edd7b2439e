// The fee service's contract (seed sections 2, 4, 7) on every mount: the same tests against
// Fastify, Express and Koa, through real servers, a real chain (anvil devnet) and the real
// in-process facilitator. Bodies are checked with JSON Schemas written from the seed.
import { request as httpRequest } from 'node:http';
import { type BazaarExtension, decodeHeaderJson, toHeaderBazaarExtension } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createEvmPaymentSigner, createPayingClient } from '@tollbooth/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_USDC } from '../src/config';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import {
  challengeOf,
  FRAMEWORKS,
  type JsonBody,
  removeScratch,
  signPayment,
  startTestService,
} from './support/harness';
import {
  assertErrorBody,
  assertFeeDecision,
  assertFeePreview,
  assertPaymentRequired,
} from './support/seed-schemas';

const BASE_USDC = KNOWN_USDC['eip155:8453']!.asset;

/** The ten resources of seed 4.3: method, concrete path, amount. */
const SEED_RESOURCES = [
  [
    'GET',
    '/api/v1/ai/explain/transaction/4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b',
    '10000',
  ],
  ['GET', '/api/v1/ai/explain/block/840000', '10000'],
  ['GET', '/api/v1/ai/fees/advice', '10000'],
  ['GET', '/api/v1/ai/chat?q=why', '10000'],
  ['POST', '/api/v1/broadcast', '10000'],
  ['GET', '/api/v1/mining/nextblock', '10000'],
  ['GET', '/api/v1/fees/observatory/scoreboard', '5000'],
  ['GET', '/api/v1/fees/observatory/block-stats', '5000'],
  ['GET', '/api/v1/fees/observatory/estimates', '5000'],
  ['GET', '/api/v1/fees/landscape', '5000'],
] as const;

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

    it('answers the free preview with every field of seed 2.1', async () => {
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

    it('answers 402 with the seed 4.2 payment terms in the body and the PAYMENT-REQUIRED header', async () => {
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

    it('pays, settles first and answers the decision of seed 2.2 with the real settlement in meta.payment', async () => {
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

    it('lists the ten resources of seed 4.3 as paid: each answers 402 with its price and 300 s timeout', async () => {
      for (const [method, path, amount] of SEED_RESOURCES) {
        const response = await fetch(`${production.url}${path}`, {
          method,
          ...(method === 'POST'
            ? { body: '{"hex":"00"}', headers: { 'content-type': 'application/json' } }
            : {}),
        });
        expect(response.status, `${method} ${path}`).toBe(402);
        const challenge = challengeOf(response);
        expect(challenge.accepts[0]).toMatchObject({ amount, asset: BASE_USDC, maxTimeoutSeconds: 300 });
      }
    });

    it('never charges for a listed resource that is not implemented yet: 501 after verify, no settlement', async () => {
      const url = `${production.url}/api/v1/mining/nextblock`;
      const header = await signPayment(url, payerKey);
      const before = await devnet.balanceOf(devnet.accounts.payTo.address);
      const response = await fetch(url, { headers: { 'payment-signature': header } });
      expect(response.status).toBe(501);
      expect(response.headers.get('payment-response')).toBeNull();
      const body = (await response.json()) as { error: { code: string } };
      assertErrorBody(body);
      expect(body.error.code).toBe('not_implemented');
      expect(await devnet.balanceOf(devnet.accounts.payTo.address)).toBe(before);
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
      const listing = (await (await fetch(`${production.url}/discovery/resources`)).json()) as JsonBody;
      expect(listing['x402Version']).toBe(2);
      expect(listing['pagination']).toEqual({ limit: 100, offset: 0, total: 10 });
      const resources = (listing['items'] as Array<{ resource: string }>).map((item) => item.resource);
      expect(resources).toContain(`${production.baseUrl}/api/v1/ai/explain/transaction/{txid}`);
      expect(resources).not.toContain(`${production.baseUrl}/api/v1/fees/now`);
      const localListing = (await (await fetch(`${local.url}/discovery/resources`)).json()) as JsonBody;
      expect(localListing['pagination'].total).toBe(11);

      const wellKnown = (await (await fetch(`${production.url}/.well-known/x402`)).json()) as JsonBody;
      expect(wellKnown['x402']).toBe(true);
      expect(wellKnown['resources']).toHaveLength(10);
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
