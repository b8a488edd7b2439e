import { beforeEach, describe, expect, it } from 'vitest';
import { TollboothError } from '../errors/tollbooth-error';
import type { GateResponse, RequestView } from '../http/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import type { LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import type { PaymentPayload, PaymentRequirements } from '../protocol/schemas';
import type { RoutesConfig } from '../routes/types';
import type { ReconcileResult } from '../scheme';
import {
  createScriptedFacilitator,
  type ScriptedFacilitator,
  TEST_TX,
} from '../test-support/scripted-facilitator';
import {
  buildPayment,
  createSimpleScheme,
  type SimpleScheme,
  TEST_PAY_TO,
  TEST_PAYER,
} from '../test-support/simple-scheme';
import { createPaymentGate, type TollboothGate } from './create-payment-gate';
import type { Outcome } from './types';

const BASE = 'https://api.example.com';
const network = 'eip155:8453';
const routes: RoutesConfig = {
  'GET /paid': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 } },
  'GET /first': {
    accepts: { network, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 },
    settle: 'before-handler',
  },
  'GET /old': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.01' }, x402Version: 1 },
  'GET /canonical': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' }, canonical: true },
};

let facilitator: ScriptedFacilitator;
let scheme: SimpleScheme;
let store: LedgerStore;
let gate: TollboothGate;
let clock: number;

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  scheme = createSimpleScheme();
  store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
  clock = Date.now();
  gate = createPaymentGate({
    routes,
    schemes: [scheme],
    facilitator,
    ledger: store,
    baseUrl: BASE,
    now: () => clock,
    inFlightWaitMs: 300,
    pollIntervalMs: 20,
    // Background rounds are tested on their own (reconciler.test.ts); here only retries resolve.
    reconcileIntervalMs: 0,
  });
});

function view(path: string, headers: Record<string, string> = {}, method = 'GET'): RequestView {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, url: `${BASE}${path}`, header: (name) => lower[name.toLowerCase()] };
}

function requirementOf(key: string): PaymentRequirements {
  return gate.routes.get(key)!.requirements[0]!;
}

function pay(payment: PaymentPayload, path = '/paid', header = 'PAYMENT-SIGNATURE'): RequestView {
  return view(path, { [header]: encodeHeader(payment) });
}

const json = (response: GateResponse) => JSON.parse(Buffer.from(response.body).toString('utf8'));
/** The receipt a response carries, decoded as a client reads it (a garbled header fails here). */
const receiptOf = (response: GateResponse, name = 'payment-response') => {
  const value = response.headers[name];
  expect(typeof value).toBe('string');
  return decodeHeaderJson(value as string);
};
/** The receipt of the scripted facilitator's successful settlement. */
const settled = { success: true, transaction: TEST_TX, network, payer: TEST_PAYER };

async function run(
  request: RequestView,
  status = 200,
): Promise<{ outcome: Outcome; response?: GateResponse; handlerRuns: number }> {
  const outcome = await gate.handle(request);
  if (outcome.kind === 'respond' || outcome.kind === 'replay')
    return { outcome, response: outcome.response, handlerRuns: 0 };
  if (outcome.kind === 'pass') return { outcome, handlerRuns: 0 };
  const body = Buffer.from(JSON.stringify({ ok: true, at: Math.random() }));
  const response = await outcome.settle({
    status,
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { outcome, response, handlerRuns: 1 };
}

describe('createPaymentGate', () => {
  it('passes free routes and preflights untouched', async () => {
    expect((await gate.handle(view('/free'))).kind).toBe('pass');
    expect((await gate.handle(view('/paid', {}, 'OPTIONS'))).kind).toBe('pass');
  });

  it.each([
    ['GET', '/paid', true],
    ['HEAD', '/paid', true],
    ['GET', '/%70aid', true],
    ['GET', 'http://evil.example/paid', true],
    ['OPTIONS', '/paid', false],
    ['GET', '/free', false],
    // Not a method /paid serves, but its path is paid: the gate answers 405 with Allow.
    ['POST', '/paid', true],
    ['GET', '/paid#top', true],
  ] as const)('tells synchronously whether %s %s is paid', (method, target, paid) => {
    expect(gate.isPaid(method, target)).toBe(paid);
  });

  it('answers 402 with the challenge in the header and the same object as body', async () => {
    const { response } = await run(view('/paid'));
    expect(response!.status).toBe(402);
    const header = JSON.parse(Buffer.from(response!.headers['payment-required']!, 'base64').toString('utf8'));
    expect(json(response!)).toEqual(header);
    expect(header).toMatchObject({
      x402Version: 2,
      error: 'payment_required',
      resource: { url: `${BASE}/paid` },
    });
    expect(response!.headers['access-control-expose-headers']).toContain('PAYMENT-RESPONSE');
    expect(response!.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reuses a sane incoming request id and replaces an unsafe one', async () => {
    const good = await run(view('/paid', { 'x-request-id': 'req-123' }));
    expect(good.response!.headers['x-request-id']).toBe('req-123');
    const bad = await run(view('/paid', { 'x-request-id': 'a b\r\nc' }));
    expect(bad.response!.headers['x-request-id']).not.toBe('a b\r\nc');
  });

  it('settles after the handler and answers with the receipt', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const { response, handlerRuns } = await run(pay(payment));
    expect(handlerRuns).toBe(1);
    expect(response!.status).toBe(200);
    const receipt = JSON.parse(
      Buffer.from(response!.headers['payment-response']!, 'base64').toString('utf8'),
    );
    expect(receipt).toMatchObject({ success: true, transaction: TEST_TX, network });
    const [entry] = await store.query({});
    expect(entry).toMatchObject({ state: 'settled', transaction: TEST_TX, resource: `${BASE}/paid` });
    expect(Buffer.from(entry!.response!.body).equals(Buffer.from(response!.body))).toBe(true);
  });

  it.each([
    ['invalid', 'payment_signature_invalid'],
    ['insufficient', 'payment_insufficient_funds'],
  ] as const)('answers 402 and releases the claim when verify says %s', async (script, code) => {
    facilitator.verifyScript = script;
    const { response } = await run(pay(buildPayment(requirementOf('GET /paid'))));
    expect(response!.status).toBe(402);
    expect(json(response!).error).toBe(code);
    expect(response!.headers['payment-required']).toBeDefined();
    expect(await store.query({})).toHaveLength(0);
    expect(facilitator.calls.settle).toBe(0);
  });

  it.each(['timeout', '5xx', 'garbage'] as const)(
    'answers 503 and releases the claim when verify has no answer (%s)',
    async (script) => {
      facilitator.verifyScript = script;
      const { response, handlerRuns } = await run(pay(buildPayment(requirementOf('GET /paid'))));
      expect(handlerRuns).toBe(0);
      expect(response!.status).toBe(503);
      expect(json(response!).error).toMatchObject({ code: 'facilitator_unavailable', retryable: true });
      expect(response!.headers['payment-required']).toBeUndefined();
      expect(await store.query({})).toHaveLength(0);
    },
  );

  it.each(['timeout', '5xx', 'garbage', 'pending'] as const)(
    'answers 502 with the retry instruction when settlement is uncertain (%s)',
    async (script) => {
      facilitator.settleScript = script;
      const { response } = await run(pay(buildPayment(requirementOf('GET /paid'))));
      expect(response!.status).toBe(502);
      expect(json(response!)).toEqual({
        error: {
          code: 'settlement_uncertain',
          message: expect.any(String),
          request_id: response!.headers['x-request-id'],
          retryable: true,
          retry: { instruction: 'retry_exact_payment_payload' },
        },
      });
      const [entry] = await store.query({});
      expect(entry!.state).toBe('uncertain');
      expect(entry!.response?.status).toBe(200);
      if (script === 'pending') expect(entry!.transaction).toBe(TEST_TX);
    },
  );

  it('answers 402 with a failed PAYMENT-RESPONSE when settlement is refused, and the stored reason on retry', async () => {
    facilitator.settleScript = 'failure';
    scheme.reconcileAnswer = { status: 'unsettled' };
    const payment = buildPayment(requirementOf('GET /paid'));
    const { response } = await run(pay(payment));
    expect(response!.status).toBe(402);
    expect(json(response!).error).toBe('payment_insufficient_funds');
    const receipt = JSON.parse(Buffer.from(response!.headers['payment-response']!, 'base64').toString());
    expect(receipt).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_insufficient_balance' });
    expect((await store.query({}))[0]!.state).toBe('rejected');
    const again = await run(pay(payment));
    expect(again.response!.status).toBe(402);
    expect(json(again.response!).error).toBe('payment_insufficient_funds');
    expect(facilitator.calls.settle).toBe(1);
  });

  it('does not settle and releases the claim when the handler fails', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const { response } = await run(pay(payment), 500);
    expect(response!.status).toBe(500);
    expect(response!.headers['payment-response']).toBeUndefined();
    expect(facilitator.calls.settle).toBe(0);
    expect(await store.query({})).toHaveLength(0);
  });

  it('releases the claim when the handler throws', async () => {
    const outcome = await gate.handle(pay(buildPayment(requirementOf('GET /paid'))));
    expect(outcome.kind).toBe('proceed');
    if (outcome.kind === 'proceed') await outcome.release();
    expect(await store.query({})).toHaveLength(0);
  });

  it('tells the onReleased hook of each release, with the handler status or none when it threw', async () => {
    const released: Array<{ requestId: string; status: number | undefined }> = [];
    gate = createPaymentGate({
      routes,
      schemes: [scheme],
      facilitator,
      ledger: store,
      baseUrl: BASE,
      reconcileIntervalMs: 0,
      hooks: {
        onReleased: (payment, status) => void released.push({ requestId: payment.requestId, status }),
      },
    });
    await run(pay(buildPayment(requirementOf('GET /paid'))), 503);
    const outcome = await gate.handle(pay(buildPayment(requirementOf('GET /paid'))));
    if (outcome.kind === 'proceed') await outcome.release();
    await run(pay(buildPayment(requirementOf('GET /paid'))), 200);
    expect(released.map((r) => r.status)).toEqual([503, undefined]);
    expect(released.every((r) => r.requestId.length > 0)).toBe(true);
  });

  it('replays the stored response byte for byte within the replay window, without settling again', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const first = await run(pay(payment));
    const second = await run(pay(payment));
    expect(second.outcome.kind).toBe('replay');
    expect(second.response!.status).toBe(200);
    expect(Buffer.from(second.response!.body).equals(Buffer.from(first.response!.body))).toBe(true);
    expect(second.response!.headers).toEqual(first.response!.headers);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('replays a byte-identical payment header without checking its signature again', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const first = await run(pay(payment));
    const preVerify = scheme.preVerify;
    let checks = 0;
    scheme.preVerify = (...args) => {
      checks++;
      return preVerify(...args);
    };
    const again = await run(pay(payment));
    expect(again.outcome.kind).toBe('replay');
    expect(Buffer.from(again.response!.body).equals(Buffer.from(first.response!.body))).toBe(true);
    expect(checks).toBe(0);
    // The same payment in other bytes (keys reordered) takes the full path, and still replays.
    const reordered = {
      payload: payment.payload,
      accepted: payment.accepted,
      resource: payment.resource,
      x402Version: 2 as const,
    };
    expect((await run(pay(reordered))).outcome.kind).toBe('replay');
    expect(checks).toBe(1);
  });

  it('answers repeated byte-identical replays from process memory, only within the replay window', async () => {
    const payment = buildPayment(requirementOf('GET /paid'), { now: Math.floor(clock / 1000) });
    const first = await run(pay(payment));
    expect((await run(pay(payment))).outcome.kind).toBe('replay');
    const get = store.get.bind(store);
    let reads = 0;
    store.get = (id) => {
      reads++;
      return get(id);
    };
    for (let i = 0; i < 3; i++) {
      const again = await run(pay(payment));
      expect(again.outcome.kind).toBe('replay');
      expect(Buffer.from(again.response!.body).equals(Buffer.from(first.response!.body))).toBe(true);
      expect(again.response!.headers).toEqual(first.response!.headers);
    }
    expect(reads).toBe(0);
    // Past the window the kept answer is not used: the ledger is asked, and refuses.
    clock += 61_000;
    const late = await run(pay(payment));
    expect(late.response!.status).toBe(402);
    expect(json(late.response!).error).toBe('payment_already_used');
    expect(reads).toBeGreaterThan(0);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('never answers another header text from a kept replay, even one that differs in a single character', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const header = encodeHeader(payment);
    await run(view('/paid', { 'PAYMENT-SIGNATURE': header }));
    expect((await run(view('/paid', { 'PAYMENT-SIGNATURE': header }))).outcome.kind).toBe('replay');
    // The kept replays are looked up by a key built from 64 spread characters of the text; the
    // second character is not one of them in a header this long, so both texts share a key.
    expect(header.length).toBeGreaterThan(128);
    const altered = `${header[0]}${header[1] === 'z' ? 'y' : 'z'}${header.slice(2)}`;
    const other = await run(view('/paid', { 'PAYMENT-SIGNATURE': altered }));
    expect(other.outcome.kind).toBe('respond');
    // The altered text is no longer the payment's base64: refused as malformed, never replayed.
    expect(other.response!.status).toBe(400);
    expect(json(other.response!).error.code).toBe('payment_header_invalid_json');
    expect(facilitator.calls.settle).toBe(1);
  });

  it('answers payment_already_used outside the replay window and for another resource', async () => {
    const requirement = requirementOf('GET /paid');
    const payment = buildPayment(requirement, { now: Math.floor(clock / 1000) });
    await run(pay(payment));
    const other = await gate.handle(
      view('/first', {
        'payment-signature': encodeHeader(
          buildPayment(requirementOf('GET /first'), {
            authorization: (payment.payload as { authorization: Record<string, string> }).authorization,
          }),
        ),
      }),
    );
    expect(other.kind).toBe('respond');
    if (other.kind === 'respond') expect(json(other.response).error).toBe('payment_already_used');
    // Past the authorization's validBefore the scheme refuses it locally, but the ledger knows it.
    clock += 61_000;
    const late = await run(pay(payment));
    expect(late.response!.status).toBe(402);
    expect(json(late.response!).error).toBe('payment_already_used');
    expect(facilitator.calls.settle).toBe(1);
  });

  it('replays a settled payment retried in the last seconds of its authorization', async () => {
    const payment = buildPayment(requirementOf('GET /paid'), { now: Math.floor(clock / 1000) });
    const first = await run(pay(payment));
    clock += 57_000; // 3 s before validBefore: inside the scheme's 6 s margin, inside the replay window
    const again = await run(pay(payment));
    expect(again.outcome.kind).toBe('replay');
    expect(Buffer.from(again.response!.body).equals(Buffer.from(first.response!.body))).toBe(true);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('refuses an expired payment the ledger has never seen with payment_expired', async () => {
    const payment = buildPayment(requirementOf('GET /paid'), { now: Math.floor(clock / 1000) - 120 });
    const { response } = await run(pay(payment));
    expect(response!.status).toBe(402);
    expect(json(response!).error).toBe('payment_expired');
    expect(facilitator.calls.verify).toBe(0);
  });

  it('serves nothing from the ledger to an unauthenticated payload that reuses a settled identity', async () => {
    const requirement = requirementOf('GET /paid');
    const payment = buildPayment(requirement, { signature: `0xc0${'11'.repeat(80)}` });
    const first = await run(pay(payment));
    expect(first.response!.status).toBe(200);
    // The exact stored payload is the same payment: replayed.
    expect((await run(pay(payment))).outcome.kind).toBe('replay');
    // Same payer and nonce (public once settled), another signature the scheme cannot check locally.
    const forged = { ...payment, payload: { ...payment.payload, signature: `0xc0${'22'.repeat(80)}` } };
    const { response } = await run(pay(forged));
    expect(response!.status).toBe(402);
    expect(json(response!).error).toBe('payment_already_used');
    expect(facilitator.calls.settle).toBe(1);
  });

  it('runs the handler once for ten concurrent requests with one payload', async () => {
    facilitator.delayMs = 20;
    const payment = buildPayment(requirementOf('GET /paid'));
    const results = await Promise.all(Array.from({ length: 10 }, () => run(pay(payment))));
    expect(results.reduce((n, r) => n + r.handlerRuns, 0)).toBe(1);
    expect(results.map((r) => r.response!.status)).toEqual(Array(10).fill(200));
    const bodies = new Set(results.map((r) => Buffer.from(r.response!.body).toString()));
    expect(bodies.size).toBe(1);
    expect(facilitator.calls.settle).toBe(1);
    expect(facilitator.calls.verify).toBe(1);
  });

  it('answers 409 payment_in_progress when another instance holds the payment past the wait bound', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const outcome = await gate.handle(pay(payment));
    expect(outcome.kind).toBe('proceed');
    const other = createPaymentGate({
      routes,
      schemes: [scheme],
      facilitator,
      ledger: store,
      baseUrl: BASE,
      inFlightWaitMs: 100,
      pollIntervalMs: 20,
    });
    const answer = await other.handle(pay(payment));
    expect(answer.kind).toBe('respond');
    if (answer.kind === 'respond') {
      expect(answer.response.status).toBe(409);
      expect(json(answer.response).error).toMatchObject({ code: 'payment_in_progress', retryable: true });
    }
  });

  it('lets another instance answer from the shared store once the first settles', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const outcome = await gate.handle(pay(payment));
    const other = createPaymentGate({
      routes,
      schemes: [scheme],
      facilitator,
      ledger: store,
      baseUrl: BASE,
      pollIntervalMs: 10,
    });
    const waiting = other.handle(pay(payment));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    const sent = await outcome.settle({
      status: 200,
      headers: {},
      body: Buffer.from('{"a":1}'),
    });
    const answer = await waiting;
    expect(answer.kind).toBe('replay');
    if (answer.kind === 'replay')
      expect(Buffer.from(answer.response.body).toString()).toBe(Buffer.from(sent.body).toString());
  });

  describe('reconciliation of an uncertain settlement', () => {
    async function uncertainPayment() {
      facilitator.settleScript = 'timeout';
      const payment = buildPayment(requirementOf('GET /paid'));
      const first = await run(pay(payment));
      expect(first.response!.status).toBe(502);
      facilitator.settleScript = 'success';
      return payment;
    }

    it('sends the stored response when the chain says it settled', async () => {
      const payment = await uncertainPayment();
      scheme.reconcileAnswer = {
        status: 'settled',
        receipt: { success: true, transaction: TEST_TX, network },
      };
      const { outcome, response } = await run(pay(payment));
      expect(outcome.kind).toBe('replay');
      expect(response!.status).toBe(200);
      expect(receiptOf(response!)).toEqual({ success: true, transaction: TEST_TX, network });
      expect(facilitator.calls.settle).toBe(1);
      expect((await store.query({}))[0]!.state).toBe('settled');
    });

    it('settles again when unsettled and still valid', async () => {
      const payment = await uncertainPayment();
      scheme.reconcileAnswer = { status: 'unsettled' };
      const { response, handlerRuns } = await run(pay(payment));
      expect(handlerRuns).toBe(0);
      expect(response!.status).toBe(200);
      expect(facilitator.calls.settle).toBe(2);
      expect((await store.query({}))[0]!.state).toBe('settled');
    });

    // The first attempt's transfer lands between reconcile and the re-settle: the facilitator then
    // refuses the re-settle (the authorization is used), which must not become a final 402.
    const answersInTurn =
      (...answers: ReconcileResult[]) =>
      () =>
        answers.shift() ?? { status: 'unknown', message: 'no more answers' };

    it('finishes as settled when the re-settle fails because the earlier transfer landed meanwhile', async () => {
      const payment = await uncertainPayment();
      scheme.reconcileAnswer = answersInTurn(
        { status: 'unsettled' },
        { status: 'settled', receipt: { success: true, transaction: TEST_TX, network } },
      );
      facilitator.settleScript = 'failure';
      const { response, handlerRuns } = await run(pay(payment));
      expect(handlerRuns).toBe(0);
      expect(response!.status).toBe(200);
      expect(receiptOf(response!)).toEqual({ success: true, transaction: TEST_TX, network });
      expect(scheme.reconcileCalls).toBe(2);
      const [entry] = await store.query({});
      expect(entry!.state).toBe('settled');
      expect(entry!.transaction).toBe(TEST_TX);
    });

    it('stays 502 when the re-settle fails and the chain cannot tell whether the transfer landed', async () => {
      const payment = await uncertainPayment();
      scheme.reconcileAnswer = answersInTurn(
        { status: 'unsettled' },
        { status: 'unknown', message: 'rpc down' },
      );
      facilitator.settleScript = 'failure';
      const { response } = await run(pay(payment));
      expect(response!.status).toBe(502);
      expect((await store.query({}))[0]!.state).toBe('uncertain');
    });

    it('rejects when the re-settle fails and the chain confirms the transfer never happened', async () => {
      const payment = await uncertainPayment();
      scheme.reconcileAnswer = { status: 'unsettled' };
      facilitator.settleScript = 'failure';
      const { response } = await run(pay(payment));
      expect(response!.status).toBe(402);
      expect(scheme.reconcileCalls).toBe(2);
      expect((await store.query({}))[0]!.state).toBe('rejected');
    });

    it('answers payment_expired when it expired unused', async () => {
      const payment = await uncertainPayment();
      scheme.reconcileAnswer = { status: 'expired' };
      const { response } = await run(pay(payment));
      expect(response!.status).toBe(402);
      expect(json(response!).error).toBe('payment_expired');
      expect((await store.query({}))[0]!.state).toBe('rejected');
    });

    it('stays 502 while the chain cannot tell', async () => {
      const payment = await uncertainPayment();
      const { response } = await run(pay(payment));
      expect(response!.status).toBe(502);
      expect(scheme.reconcileCalls).toBe(1);
      expect((await store.query({}))[0]!.state).toBe('uncertain');
    });
  });

  it('settles before the handler on a before-handler route', async () => {
    const payment = buildPayment(requirementOf('GET /first'));
    const outcome = await gate.handle(pay(payment, '/first'));
    expect(outcome.kind).toBe('proceed');
    expect(facilitator.calls.settle).toBe(1);
    if (outcome.kind !== 'proceed') return;
    expect(outcome.payment.settlement?.success).toBe(true);
    const response = await outcome.settle({
      status: 200,
      headers: {},
      body: Buffer.from('{}'),
    });
    expect(receiptOf(response)).toEqual(settled);
    expect((await store.query({}))[0]).toMatchObject({ state: 'settled', response: { status: 200 } });
  });

  it('does not run the handler when a before-handler settlement is uncertain', async () => {
    facilitator.settleScript = '5xx';
    const outcome = await gate.handle(pay(buildPayment(requirementOf('GET /first')), '/first'));
    expect(outcome.kind).toBe('respond');
    if (outcome.kind === 'respond') expect(outcome.response.status).toBe(502);
  });

  it('accepts a v2 payload in X-PAYMENT and answers in X-PAYMENT-RESPONSE', async () => {
    const { response } = await run(pay(buildPayment(requirementOf('GET /paid')), '/paid', 'X-PAYMENT'));
    expect(response!.status).toBe(200);
    expect(receiptOf(response!, 'x-payment-response')).toEqual(settled);
    expect(response!.headers['payment-response']).toBeUndefined();
  });

  it('serves a v1 route with a v1 challenge and a v1 payment', async () => {
    const challenge = await run(view('/old'));
    expect(challenge.response!.headers['payment-required']).toBeUndefined();
    expect(json(challenge.response!)).toMatchObject({
      x402Version: 1,
      accepts: [{ network: 'base', maxAmountRequired: '10000' }],
    });
    const v2 = buildPayment(requirementOf('GET /old'));
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: v2.payload };
    const { response } = await run(view('/old', { 'x-payment': encodeHeader(v1) }));
    expect(response!.status).toBe(200);
    expect(receiptOf(response!, 'x-payment-response')).toEqual({ ...settled, network: 'base' });
  });

  it('rejects a v1 payment on a v2 route with payment_version_mismatch', async () => {
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: {} };
    const { response } = await run(view('/paid', { 'x-payment': encodeHeader(v1) }));
    expect(json(response!).error).toBe('payment_version_mismatch');
  });

  it('answers 503 with Retry-After and no challenge while paused, 410 once retired', async () => {
    gate.routes.setAvailability('GET /paid', 'paused');
    const paused = await run(view('/paid'));
    expect(paused.response!.status).toBe(503);
    expect(paused.response!.headers['retry-after']).toBe('60');
    expect(paused.response!.headers['payment-required']).toBeUndefined();
    expect(json(paused.response!).error.code).toBe('resource_paused');
    gate.routes.setAvailability('GET /paid', 'retired');
    const retired = await run(view('/paid'));
    expect(retired.response!.status).toBe(410);
    expect(json(retired.response!).error.code).toBe('resource_retired');
  });

  it.each(['/canonical?x=1', '/canonical?', '/canonical/', '/CANONICAL', '//canonical'])(
    'answers 400 to the non-canonical request %s',
    async (path) => {
      const { response } = await run(view(path));
      expect(response!.status).toBe(400);
      expect(json(response!).error.code).toBe('non_canonical_request');
    },
  );

  it.each([
    'http://api.example.com/canonical',
    'https://other.example.com/canonical',
    'https://api.example.com:8443/canonical',
  ])('answers 400 to the canonical path on another scheme or host: %s', async (url) => {
    const { response } = await run({ method: 'GET', url, header: () => undefined });
    expect(response!.status).toBe(400);
    expect(json(response!).error.code).toBe('non_canonical_request');
  });

  it('accepts the canonical URL with an explicit default port and challenges it', async () => {
    const { response } = await run({
      method: 'GET',
      url: 'https://API.example.com:443/canonical',
      header: () => undefined,
    });
    expect(response!.status).toBe(402);
  });

  it('rejects invalid options, all at once', () => {
    expect(() =>
      createPaymentGate({ routes, schemes: [], facilitator: undefined as never, inFlightWaitMs: -1 }),
    ).toThrow(TollboothError);
  });
});
