// The background reconciler and the recovery paths of the gate: uncertain settlements resolved
// without the payer, dead instances' leases, the ledger invariant after a failing handler, and
// the request-target refusals (405 with Allow, #fragment).
import { beforeEach, describe, expect, it } from 'vitest';
import { createPaymentGate, type PaymentGateOptions, type TollboothGate } from '../gate/create-payment-gate';
import type { TransferEvent } from '../gate/types';
import type { GateResponse, RequestView } from '../http/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import type { LedgerEntry, LedgerResolution, LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '../protocol/schemas';
import type { RoutesConfig } from '../routes/types';
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
} from '../test-support/simple-scheme';

const BASE = 'https://api.example.com';
const network = 'eip155:8453';
const accepts = { network, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 };
const routes: RoutesConfig = {
  'GET /paid': { accepts },
  'GET /first': { accepts, settle: 'before-handler' },
  'POST /submit': { accepts },
};
const SETTLED: SettleResponse = { success: true, transaction: TEST_TX, network };

let facilitator: ScriptedFacilitator;
let scheme: SimpleScheme;
let store: LedgerStore;
let clock: number;
let transfers: TransferEvent[];
let resolutions: LedgerResolution[];

function createGate(overrides: Partial<PaymentGateOptions> = {}): TollboothGate {
  return createPaymentGate({
    routes,
    schemes: [scheme],
    facilitator,
    ledger: store,
    baseUrl: BASE,
    now: () => clock,
    inFlightWaitMs: 200,
    pollIntervalMs: 10,
    reconcileIntervalMs: 0,
    instanceId: 'alpha',
    hooks: {
      onTransfer: (event) => transfers.push(event),
      onResolved: (_entry, resolution) => resolutions.push(resolution),
    },
    ...overrides,
  });
}

let gate: TollboothGate;
beforeEach(() => {
  facilitator = createScriptedFacilitator();
  scheme = createSimpleScheme();
  clock = Date.now();
  store = createMemoryLedgerStore({ purgeIntervalMs: 0, now: () => clock });
  transfers = [];
  resolutions = [];
  gate = createGate();
});

function view(path: string, headers: Record<string, string> = {}, method = 'GET'): RequestView {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, url: `${BASE}${path}`, header: (name) => lower[name.toLowerCase()] };
}
const requirementOf = (key: string): PaymentRequirements => gate.routes.get(key)!.requirements[0]!;
const pay = (payment: PaymentPayload, path = '/paid') =>
  view(path, { 'PAYMENT-SIGNATURE': encodeHeader(payment) });
const json = (response: GateResponse) => JSON.parse(Buffer.from(response.body).toString('utf8'));

/** Handles a request and, when told to proceed, runs a handler answering `status`. */
async function run(on: TollboothGate, request: RequestView, status = 200) {
  const outcome = await on.handle(request);
  if (outcome.kind === 'pass') throw new Error('expected a paid route');
  if (outcome.kind !== 'proceed') return { kind: outcome.kind, response: outcome.response, handlerRuns: 0 };
  const body = Buffer.from(JSON.stringify({ ok: status < 400, status }));
  const response = await outcome.settle({
    status,
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { kind: outcome.kind, response, handlerRuns: 1 };
}

async function onlyEntry(): Promise<LedgerEntry> {
  const entries = await store.query({});
  expect(entries).toHaveLength(1);
  return entries[0]!;
}

/** A payment whose settle answer was lost (facilitator timeout after the transfer, say). */
async function uncertainPayment(path = '/paid', key = 'GET /paid') {
  facilitator.settleScript = 'timeout';
  const payment = buildPayment(requirementOf(key));
  const first = await run(gate, pay(payment, path));
  expect(first.response.status).toBe(502);
  facilitator.settleScript = 'success';
  return payment;
}

describe('ledger reconciler', () => {
  it('settles an uncertain payment the chain shows settled, and the retry gets the paid answer without a settle', async () => {
    const payment = await uncertainPayment();
    expect(await onlyEntry()).toMatchObject({ state: 'uncertain', leaseUntil: 0 });
    scheme.reconcileAnswer = { status: 'settled', receipt: SETTLED };
    expect(await gate.reconciler.runOnce()).toMatchObject({ examined: 1, confirmed: 1 });
    const entry = await onlyEntry();
    expect(entry).toMatchObject({
      state: 'settled',
      transaction: TEST_TX,
      resolution: {
        by: 'reconciler',
        instance: 'alpha',
        from: 'uncertain',
        action: 'confirmed-on-chain',
        attempts: 1,
      },
    });
    expect(decodeHeaderJson(entry.response!.headers['payment-response']!)).toMatchObject({ success: true });
    expect(transfers).toEqual([expect.objectContaining({ via: 'reconciler', transaction: TEST_TX })]);

    const retry = await run(gate, pay(payment));
    expect(retry.kind).toBe('replay');
    expect(retry.response.status).toBe(200);
    expect(Buffer.compare(Buffer.from(retry.response.body), Buffer.from(entry.response!.body))).toBe(0);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('leaves a route that settles first without an answer, and its retry runs the handler', async () => {
    const payment = await uncertainPayment('/first', 'GET /first');
    scheme.reconcileAnswer = { status: 'settled', receipt: SETTLED };
    await gate.reconciler.runOnce();
    const entry = await onlyEntry();
    expect(entry).toMatchObject({ state: 'settled', leaseUntil: 0 });
    expect(entry.response).toBeUndefined();
    const retry = await run(gate, pay(payment, '/first'));
    expect(retry).toMatchObject({ kind: 'proceed', handlerRuns: 1 });
    expect(retry.response.status).toBe(200);
    expect(decodeHeaderJson(retry.response.headers['payment-response'] as string)).toEqual(SETTLED);
    expect((await onlyEntry()).response?.status).toBe(200);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('keeps an unsettled payment uncertain, looks again later, and lets the retry settle it again', async () => {
    const payment = await uncertainPayment();
    scheme.reconcileAnswer = { status: 'unsettled' };
    expect(await gate.reconciler.runOnce()).toMatchObject({ unresolved: 1 });
    const entry = await onlyEntry();
    expect(entry.state).toBe('uncertain');
    expect(entry.leaseUntil).toBeGreaterThan(clock);
    expect(entry.resolution).toMatchObject({ action: 'unresolved', attempts: 1 });
    // Not looked at again before its delay; a retry does not wait for it.
    expect(await gate.reconciler.runOnce()).toMatchObject({ examined: 0 });
    const retry = await run(gate, pay(payment));
    expect(retry.response.status).toBe(200);
    expect(facilitator.calls.settle).toBe(2);
    expect(await onlyEntry()).toMatchObject({
      state: 'settled',
      resolution: { by: 'retry', action: 'settled-again', attempts: 1 },
    });
    expect(transfers).toEqual([expect.objectContaining({ via: 'retry' })]);
  });

  it('rejects an uncertain payment whose authorization expired unused', async () => {
    const payment = await uncertainPayment();
    scheme.reconcileAnswer = { status: 'expired' };
    expect(await gate.reconciler.runOnce()).toMatchObject({ expired: 1 });
    expect(await onlyEntry()).toMatchObject({
      state: 'rejected',
      error: { code: 'payment_expired' },
      resolution: { action: 'expired-unused' },
    });
    const retry = await run(gate, pay(payment));
    expect(retry.response.status).toBe(402);
    expect(json(retry.response).error).toBe('payment_expired');
  });

  it("takes over a dead instance's settlement once its lease ran out, and never a live one's", async () => {
    // beta's settle stays in flight until the test lets it answer, however slow the machine.
    let answerSettle!: () => void;
    const held = new Promise<void>((resolve) => {
      answerSettle = resolve;
    });
    const settle = facilitator.settle.bind(facilitator);
    facilitator.settle = async (...args) => {
      await held;
      return settle(...args);
    };
    const other = createGate({ instanceId: 'beta' });
    const payment = buildPayment(requirementOf('GET /paid'));
    const outcome = await other.handle(pay(payment));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    // beta's handler finished and its settle is on the way when beta dies: the entry stays settling.
    const settling = outcome.settle({
      status: 200,
      headers: {},
      body: Buffer.from('{"beta":1}'),
    });
    await other.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await onlyEntry()).state).toBe('settling');
    expect(await gate.reconciler.runOnce()).toMatchObject({ examined: 0 });

    clock += 11_000;
    scheme.reconcileAnswer = { status: 'settled', receipt: SETTLED };
    expect(await gate.reconciler.runOnce()).toMatchObject({ abandoned: 1, confirmed: 1 });
    expect(resolutions.map((r) => r.action)).toEqual(['abandoned', 'confirmed-on-chain']);
    const entry = await onlyEntry();
    expect(entry).toMatchObject({
      state: 'settled',
      resolution: { from: 'settling', action: 'confirmed-on-chain' },
    });
    expect(Buffer.from(entry.response!.body).toString()).toBe('{"beta":1}');
    answerSettle();
    await settling;
    expect((await onlyEntry()).state).toBe('settled');
  });

  it('releases claimed and verified entries of dead owners (nothing was spent)', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const other = createGate({ instanceId: 'beta' });
    expect((await other.handle(pay(payment))).kind).toBe('proceed');
    await other.close();
    clock += 11_000;
    expect(await gate.reconciler.runOnce()).toMatchObject({ released: 1 });
    expect(await store.query({})).toHaveLength(0);
    expect((await run(gate, pay(payment))).response.status).toBe(200);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('resumes its own entries from an earlier life without waiting for their leases', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const before = createGate({ instanceId: 'alpha' });
    const outcome = await before.handle(pay(payment));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await before.close();
    clock += 1;
    // The same instance id, restarted: the lease (10 s) has not run out yet.
    const restarted = createGate({ instanceId: 'alpha' });
    const other = createGate({ instanceId: 'beta' });
    expect(await other.reconciler.runOnce()).toMatchObject({ examined: 0 });
    expect(await restarted.reconciler.runOnce()).toMatchObject({ released: 1 });
    expect(await store.query({})).toHaveLength(0);
  });
});

describe('a route that settles before its handler', () => {
  it('never stores a failing handler as the paid answer, tells the payer it was charged, and runs the handler on the retry', async () => {
    const payment = buildPayment(requirementOf('GET /first'));
    const failed = await run(gate, pay(payment, '/first'), 500);
    expect(failed.response.status).toBe(503);
    const body = json(failed.response);
    expect(body.error).toMatchObject({
      code: 'paid_response_unavailable',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
    });
    expect(body.error.message).not.toMatch(/nothing was charged/i);
    expect(decodeHeaderJson(failed.response.headers['payment-response']!)).toMatchObject({ success: true });
    const entry = await onlyEntry();
    expect(entry).toMatchObject({ state: 'settled', leaseUntil: 0 });
    expect(entry.response).toBeUndefined();

    const retry = await run(gate, pay(payment, '/first'));
    expect(retry).toMatchObject({ kind: 'proceed', handlerRuns: 1 });
    expect(retry.response.status).toBe(200);
    expect((await onlyEntry()).response?.status).toBe(200);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('runs the handler again on the retry when it threw after settlement', async () => {
    const payment = buildPayment(requirementOf('GET /first'));
    const outcome = await gate.handle(pay(payment, '/first'));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.release();
    expect((await onlyEntry()).state).toBe('settled');
    const retry = await run(gate, pay(payment, '/first'));
    expect(retry.response.status).toBe(200);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('waits for another instance running the handler of a settled payment instead of running it twice', async () => {
    const payment = buildPayment(requirementOf('GET /first'));
    const other = createGate({ instanceId: 'beta' });
    const outcome = await other.handle(pay(payment, '/first'));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    const waiting = run(gate, pay(payment, '/first'));
    await outcome.settle({ status: 200, headers: {}, body: Buffer.from('{"beta":1}') });
    const answer = await waiting;
    expect(answer).toMatchObject({ kind: 'replay', handlerRuns: 0 });
    expect(Buffer.from(answer.response.body).toString()).toBe('{"beta":1}');
    await other.close();
  });
});

describe('errors after a settlement', () => {
  it('never say nothing was charged: a ledger failure once the chain showed the transfer answers 503 with the retry instruction, and the retry is served', async () => {
    const payment = await uncertainPayment();
    scheme.reconcileAnswer = { status: 'settled', receipt: SETTLED };
    // The store fails the write that would record the settlement the chain shows.
    const update = store.update.bind(store);
    let failWrites = true;
    store.update = async (id, expect, patch) => {
      if (failWrites && patch.state === 'settled') throw new Error('ledger down');
      return update(id, expect, patch);
    };
    const failed = await run(gate, pay(payment));
    expect(failed.response.status).toBe(503);
    const body = json(failed.response);
    expect(body.error).toMatchObject({
      code: 'internal_error',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
    });
    expect(body.error.message).not.toMatch(/nothing was charged|not charged/i);
    expect((await onlyEntry()).state).not.toBe('settled');

    failWrites = false;
    const retry = await run(gate, pay(payment));
    expect(retry.response.status).toBe(200);
    expect((await onlyEntry()).state).toBe('settled');
    expect(facilitator.calls.settle).toBe(1);
  });

  it('tell a payer settled before its handler that it was charged, with the receipt, when recording the answer fails', async () => {
    const payment = buildPayment(requirementOf('GET /first'));
    const outcome = await gate.handle(pay(payment, '/first'));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    // A handler answer the gate cannot even read: finish fails after the settlement.
    const answer = await outcome.settle({
      status: 200,
      headers: {
        get 'content-type'(): string {
          throw new Error('broken response');
        },
      },
      body: Buffer.from('{}'),
    });
    expect(answer.status).toBe(503);
    expect(json(answer).error).toMatchObject({
      code: 'paid_response_unavailable',
      retry: { instruction: 'retry_exact_payment_payload' },
    });
    expect(decodeHeaderJson(answer.headers['payment-response']!)).toMatchObject({
      success: true,
      transaction: TEST_TX,
    });
    expect((await onlyEntry()).state).toBe('settled');
    const retry = await run(gate, pay(payment, '/first'));
    expect(retry.response.status).toBe(200);
    expect(facilitator.calls.settle).toBe(1);
  });
});

describe('request targets of paid routes', () => {
  it('answers 405 with Allow for a method no paid route at that path serves, before any challenge', async () => {
    for (const [method, path, allow] of [
      ['PUT', '/paid', 'GET, HEAD'],
      ['DELETE', '/first', 'GET, HEAD'],
      ['GET', '/submit', 'POST'],
    ] as const) {
      const outcome = await gate.handle(view(path, {}, method));
      if (outcome.kind !== 'respond') throw new Error(`expected an answer for ${method} ${path}`);
      expect(outcome.response.status).toBe(405);
      expect(outcome.response.headers['allow']).toBe(allow);
      expect(outcome.response.headers['payment-required']).toBeUndefined();
      expect(json(outcome.response).error.code).toBe('method_not_allowed');
    }
    expect(facilitator.calls.verify).toBe(0);
  });

  it('lets other methods through when the application serves them (otherMethods: pass)', async () => {
    const open = createGate({ otherMethods: 'pass' });
    expect((await open.handle(view('/paid', {}, 'PUT'))).kind).toBe('pass');
    expect(open.isPaid('PUT', '/paid')).toBe(false);
  });

  it('refuses a target with a #fragment with 400 before any challenge or payment', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const outcome = await gate.handle(view('/paid#frag', { 'PAYMENT-SIGNATURE': encodeHeader(payment) }));
    if (outcome.kind !== 'respond') throw new Error('expected an answer');
    expect(outcome.response.status).toBe(400);
    expect(json(outcome.response).error.code).toBe('invalid_request_target');
    expect(outcome.response.headers['payment-required']).toBeUndefined();
    expect(facilitator.calls.verify).toBe(0);
  });
});

describe('chain readers', () => {
  it('refuses to start without a chain reader when required, and warns once otherwise', () => {
    const blind = { ...createSimpleScheme(), reconcile: undefined };
    expect(() => createGate({ schemes: [blind], requireChainReader: true })).toThrow(
      /eip155:8453.*no chain reader/,
    );
    const warnings: string[] = [];
    createGate({
      schemes: [blind],
      logger: { warn: (_f, message) => warnings.push(message), error: () => {} },
    });
    expect(warnings).toEqual([expect.stringMatching(/eip155:8453 \(scheme exact\) has no chain reader/)]);
  });

  it('without a chain reader, a retry of an uncertain payment reaches the facilitator again', async () => {
    scheme.reconcile = undefined;
    const payment = await uncertainPayment();
    expect(facilitator.calls.settle).toBe(1);
    // The facilitator refuses (the first transfer landed, say): still uncertain, never a refusal.
    facilitator.settleScript = 'failure';
    const refused = await run(gate, pay(payment));
    expect(refused.response.status).toBe(502);
    expect(json(refused.response).error.code).toBe('settlement_uncertain');
    expect(facilitator.calls.settle).toBe(2);
    expect((await onlyEntry()).state).toBe('uncertain');
    // The facilitator settles it: served, its answer stored.
    facilitator.settleScript = 'success';
    const served = await run(gate, pay(payment));
    expect(served.response.status).toBe(200);
    expect(facilitator.calls.settle).toBe(3);
    expect(await onlyEntry()).toMatchObject({ state: 'settled', resolution: { action: 'settled-again' } });
  });

  it('counts a reader only for the networks the scheme says it has one for', () => {
    const elsewhere = { ...createSimpleScheme(), hasChainReader: (n: string) => n === 'eip155:84532' };
    expect(() => createGate({ schemes: [elsewhere], requireChainReader: true })).toThrow(
      /eip155:8453 \(scheme exact\) has no chain reader/,
    );
    const here = { ...createSimpleScheme(), hasChainReader: (n: string) => n === 'eip155:8453' };
    expect(() => createGate({ schemes: [here], requireChainReader: true })).not.toThrow();
  });

  it('is ready only when the facilitator and every paid network answer', async () => {
    scheme.chainStatus = async () => ({ ok: true, blockNumber: 7 });
    expect(await gate.readiness()).toEqual({
      ready: true,
      facilitator: { ok: true },
      chain: { [network]: { ok: true } },
    });
    scheme.chainStatus = async () => ({ ok: false, message: 'connection refused' });
    expect(await gate.readiness()).toMatchObject({
      ready: false,
      chain: { [network]: { ok: false, detail: 'connection refused' } },
    });
    scheme.chainStatus = async () => ({ ok: true });
    facilitator.supported = async () => {
      throw new Error('facilitator down');
    };
    expect(await gate.readiness()).toMatchObject({
      ready: false,
      facilitator: { ok: false, detail: 'facilitator down' },
    });
  });
});
