import { createServer, request as httpRequest, type Server } from 'node:http';
import {
  createMemoryLedgerStore,
  decodeHeaderJson,
  encodeHeader,
  type LedgerStore,
  type PaymentPayload,
  type PaymentRequirements,
  type RoutesConfig,
} from '@tollbooth/core';
// Test doubles from core's test support: a scripted outside facilitator and a structural scheme.
import {
  buildPayment,
  createScriptedFacilitator,
  createSimpleScheme,
  type ScriptedFacilitator,
  TEST_PAY_TO,
  TEST_PAYER,
  TEST_TX,
} from '@tollbooth/core/testing';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TollboothMiddleware, tollbooth } from './index';

const network = 'eip155:8453';
const routes: RoutesConfig = {
  'GET /api/v1/fees/now': {
    accepts: { network, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 },
    canonical: true,
  },
  'GET /api/v1/ai/*': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.01', maxTimeoutSeconds: 300 } },
  'GET /api/v1/mining/nextblock': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.01' } },
};

let facilitator: ScriptedFacilitator;
let store: LedgerStore;
let middleware: TollboothMiddleware;
let runs: number;
let server: Server;
let handlerStatus = 200;

const app = express();
app.set('trust proxy', 'loopback');
app.use((req, res, next) => middleware(req, res, next));
app.get('/api/v1/fees/now', (req, res) => {
  runs++;
  res.status(handlerStatus).json({ data: { decision: 'send' }, payer: req.payment?.payer, n: Math.random() });
});
app.get('/api/v1/ai/chat', async (_req, res) => {
  runs++;
  await new Promise((resolve) => setTimeout(resolve, 20));
  res.json({ answer: 42, n: Math.random() });
});
app.get('/api/v1/mining/nextblock', () => {
  runs++;
  throw new Error('boom');
});
app.get('/api/v1/fees/preview', (_req, res) => {
  res.json({ free: true });
});

beforeAll(async () => {
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
  middleware = tollbooth({
    routes,
    schemes: [createSimpleScheme()],
    facilitator,
    ledger: store,
    baseUrl: 'https://api.example.com',
    // Node refuses request headers over 16 KiB in total (431), so the gate's cap is set below that.
    maxPaymentHeaderBytes: 8_192,
  });
  runs = 0;
  handlerStatus = 200;
});

// Deployed behind a TLS-terminating proxy that forwards the public scheme and host.
const agent = () =>
  request.agent(server).set('X-Forwarded-Proto', 'https').set('X-Forwarded-Host', 'api.example.com');
const requirement = (key = 'GET /api/v1/fees/now'): PaymentRequirements =>
  middleware.gate.routes.get(key)!.requirements[0]!;
const header = (payment: PaymentPayload) => encodeHeader(payment);

describe('tollbooth() on Express 5', () => {
  it('answers an unpaid request with 402, PAYMENT-REQUIRED and the same object as JSON body', async () => {
    const res = await agent().get('/api/v1/fees/now');
    expect(res.status).toBe(402);
    const challenge = JSON.parse(
      Buffer.from(String(res.headers['payment-required']), 'base64').toString('utf8'),
    );
    expect(res.body).toEqual(challenge);
    expect(challenge).toMatchObject({
      x402Version: 2,
      resource: { url: 'https://api.example.com/api/v1/fees/now' },
      accepts: [{ scheme: 'exact', network, amount: '1000', payTo: TEST_PAY_TO, maxTimeoutSeconds: 60 }],
    });
    expect(res.headers['access-control-expose-headers']).toContain('PAYMENT-REQUIRED');
    expect(runs).toBe(0);
  });

  it('serves a paid request once settled, with PAYMENT-RESPONSE and the payment on req', async () => {
    const res = await agent()
      .get('/api/v1/fees/now')
      .set('PAYMENT-SIGNATURE', header(buildPayment(requirement())));
    expect(res.status).toBe(200);
    expect(res.body.payer).toMatch(/^0x/);
    expect(decodeHeaderJson(String(res.headers['payment-response']))).toEqual({
      success: true,
      transaction: TEST_TX,
      network,
      payer: TEST_PAYER,
    });
    expect(res.headers['access-control-expose-headers']).toContain('PAYMENT-RESPONSE');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
  });

  it.each([
    ['not JSON', () => 'bm90IGpzb24=', 'payment_header_invalid_json'],
    ['oversized', () => 'A'.repeat(9_000), 'payment_header_too_large'],
    [
      'URL-safe base64',
      () =>
        header(buildPayment(requirement(), { accepted: { extra: { name: '??>>', version: '2' } } }))
          .replaceAll('+', '-')
          .replaceAll('/', '_') + '_',
      'payment_header_invalid_base64',
    ],
  ])('answers a %s payment header with 400, the Error body and the challenge', async (_name, make, code) => {
    const res = await agent().get('/api/v1/fees/now').set('PAYMENT-SIGNATURE', make());
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(decodeHeaderJson(String(res.headers['payment-required']))).toMatchObject({ error: code });
    expect(runs).toBe(0);
  });

  it.each([
    [
      'wrong-amount',
      () => header(buildPayment(requirement(), { accepted: { amount: '999' } })),
      'payment_amount_mismatch',
    ],
    [
      'wrong-payTo',
      () => header(buildPayment(requirement(), { accepted: { payTo: TEST_PAY_TO.toLowerCase() } })),
      'payment_recipient_mismatch',
    ],
    [
      'wrong-network',
      () => header(buildPayment(requirement(), { accepted: { network: 'eip155:84532' } })),
      'payment_network_mismatch',
    ],
    [
      'expired',
      () => header(buildPayment(requirement(), { authorization: { validBefore: '1000' } })),
      'payment_expired',
    ],
  ])('answers a %s payment with 402 and a specific code', async (_name, make, code) => {
    const res = await agent().get('/api/v1/fees/now').set('PAYMENT-SIGNATURE', make());
    expect(res.status).toBe(402);
    expect(res.body.error).toBe(code);
    expect(res.headers['payment-required']).toBeDefined();
    expect(runs).toBe(0);
  });

  it('does not settle when the handler answers with a status of 400 or more', async () => {
    handlerStatus = 422;
    const res = await agent()
      .get('/api/v1/fees/now')
      .set('PAYMENT-SIGNATURE', header(buildPayment(requirement())));
    expect(res.status).toBe(422);
    expect(res.headers['payment-response']).toBeUndefined();
    expect(facilitator.calls.settle).toBe(0);
    expect(await store.query({})).toHaveLength(0);
  });

  it('does not settle when the handler throws', async () => {
    const payment = buildPayment(requirement('GET /api/v1/mining/nextblock'));
    const res = await agent().get('/api/v1/mining/nextblock').set('PAYMENT-SIGNATURE', header(payment));
    expect(res.status).toBe(500);
    expect(facilitator.calls.settle).toBe(0);
    expect(await store.query({})).toHaveLength(0);
  });

  it('answers 502 with retry_exact_payment_payload when settlement times out', async () => {
    facilitator.settleScript = 'timeout';
    const res = await agent()
      .get('/api/v1/fees/now')
      .set('PAYMENT-SIGNATURE', header(buildPayment(requirement())));
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({
      code: 'settlement_uncertain',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
    });
    expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  });

  it('returns the stored response byte for byte when the same payload is retried after settlement', async () => {
    const value = header(buildPayment(requirement()));
    const first = await agent().get('/api/v1/fees/now').set('PAYMENT-SIGNATURE', value);
    const second = await agent().get('/api/v1/fees/now').set('PAYMENT-SIGNATURE', value);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(decodeHeaderJson(String(first.headers['payment-response']))).toMatchObject({
      transaction: TEST_TX,
    });
    expect(second.headers['payment-response']).toBe(first.headers['payment-response']);
    expect(facilitator.calls.settle).toBe(1);
    expect(runs).toBe(1);
  });

  it('runs the handler once for ten concurrent requests carrying one payload', async () => {
    const value = header(buildPayment(requirement('GET /api/v1/ai/*'), { resource: 'x' }));
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => agent().get('/api/v1/ai/chat').set('PAYMENT-SIGNATURE', value)),
    );
    expect(runs).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('answers 503 with Retry-After and no PAYMENT-REQUIRED while paused, and 410 once retired', async () => {
    middleware.gate.routes.setAvailability('GET /api/v1/fees/now', 'paused');
    const paused = await agent().get('/api/v1/fees/now');
    expect(paused.status).toBe(503);
    expect(paused.headers['retry-after']).toBe('60');
    expect(paused.headers['payment-required']).toBeUndefined();
    expect(paused.body.error).toMatchObject({ code: 'resource_paused', retryable: true });
    middleware.gate.routes.setAvailability('GET /api/v1/fees/now', 'retired');
    const retired = await agent().get('/api/v1/fees/now');
    expect(retired.status).toBe(410);
    expect(retired.body.error.code).toBe('resource_retired');
  });

  it('answers 400 to the canonical path reached on another host or scheme', async () => {
    const direct = await request(server).get('/api/v1/fees/now');
    expect(direct.status).toBe(400);
    expect(direct.body.error.code).toBe('non_canonical_request');
    const plain = await request(server)
      .get('/api/v1/fees/now')
      .set('X-Forwarded-Proto', 'http')
      .set('X-Forwarded-Host', 'api.example.com');
    expect(plain.status).toBe(400);
  });

  it('answers 400 to a non-canonical request', async () => {
    const res = await agent().get('/api/v1/fees/now?fresh=1');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'non_canonical_request', retryable: false });
    expect(typeof res.body.error.request_id).toBe('string');
  });

  it('lets OPTIONS preflights and free routes through untouched', async () => {
    const preflight = await agent().options('/api/v1/fees/now');
    expect(preflight.status).not.toBe(402);
    expect(preflight.headers['payment-required']).toBeUndefined();
    const free = await agent().get('/api/v1/fees/preview');
    expect(free.status).toBe(200);
    expect(free.body).toEqual({ free: true });
  });

  it('gates encoded and case-changed paths to a paid route', async () => {
    for (const path of ['/api/v1/AI/chat', '/api/v1/ai%2Fchat', '/api//v1/ai/chat']) {
      const res = await agent().get(path);
      expect(res.status).toBe(402);
    }
    expect(runs).toBe(0);
  });

  it('gates an absolute-form request target to a paid route', async () => {
    const { port } = server.address() as { port: number };
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: 'http://evil.example/api/v1/ai/chat' },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(402);
    expect(runs).toBe(0);
  });

  it('accepts X-PAYMENT and answers in X-PAYMENT-RESPONSE', async () => {
    const res = await agent()
      .get('/api/v1/fees/now')
      .set('X-PAYMENT', header(buildPayment(requirement())));
    expect(res.status).toBe(200);
    expect(decodeHeaderJson(String(res.headers['x-payment-response']))).toEqual({
      success: true,
      transaction: TEST_TX,
      network,
      payer: TEST_PAYER,
    });
    expect(res.headers['access-control-expose-headers']).toContain('X-PAYMENT-RESPONSE');
  });
});
