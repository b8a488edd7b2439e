// A payment settled before its handler ran whose answer was never produced — the instance died
// with the handler running, or the settle answer was lost and the reconciler later found the
// transfer on chain — is served on its payer's retry even once the authorization's validBefore and
// the replay window have passed: the handler runs then, once, and nothing is settled again. Only a
// stored answer is bounded by the replay window. Driven through the public entry point with a fake
// clock; the leases are the only thing that waits, and they wait on that clock.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createMemoryLedgerStore,
  createPaymentGate,
  decodeHeaderJson,
  encodeHeader,
  type GateResponse,
  type LedgerEntry,
  type LedgerStore,
  type PaymentGateOptions,
  type PaymentPayload,
  type RequestView,
  type RoutesConfig,
  type TollboothGate,
} from '../index';
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
const routes: RoutesConfig = {
  'GET /first': {
    accepts: { network, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 },
    settle: 'before-handler',
  },
};
/** Past the lease (10 s), the authorization's validBefore (60 s) and so the replay window. */
const AFTER_EVERYTHING_MS = 5 * 60_000;

let facilitator: ScriptedFacilitator;
let scheme: SimpleScheme;
let store: LedgerStore;
let clock: number;
let handlerRuns: number;

function createGate(instanceId: string, overrides: Partial<PaymentGateOptions> = {}): TollboothGate {
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
    instanceId,
    ...overrides,
  });
}

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  scheme = createSimpleScheme();
  clock = Date.now();
  store = createMemoryLedgerStore({ purgeIntervalMs: 0, now: () => clock });
  handlerRuns = 0;
});

const pay = (payment: PaymentPayload): RequestView => {
  const header = encodeHeader(payment);
  return {
    method: 'GET',
    url: `${BASE}/first`,
    header: (name) => (name.toLowerCase() === 'payment-signature' ? header : undefined),
  };
};
const errorOf = (response: GateResponse) => JSON.parse(Buffer.from(response.body).toString('utf8')).error;

/** Handles a request and, when told to proceed, runs the handler and finishes. */
async function request(gate: TollboothGate, payment: PaymentPayload) {
  const outcome = await gate.handle(pay(payment));
  if (outcome.kind === 'pass') throw new Error('expected a paid route');
  if (outcome.kind !== 'proceed') return { kind: outcome.kind, response: outcome.response };
  handlerRuns += 1;
  const settlement = outcome.payment.settlement;
  const response = await outcome.settle({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(`{"run":${handlerRuns}}`),
  });
  return { kind: outcome.kind, response, settlement };
}

async function onlyEntry(): Promise<LedgerEntry> {
  const entries = await store.query({});
  expect(entries).toHaveLength(1);
  return entries[0]!;
}

describe('a payment settled before its handler ran, its answer never produced', () => {
  it('is served on its payer retry after the replay window when its instance died with the handler running', async () => {
    const dying = createGate('beta');
    const payment = buildPayment(dying.routes.get('GET /first')!.requirements[0]!, {
      now: Math.floor(clock / 1000),
    });
    const outcome = await dying.handle(pay(payment));
    expect(outcome.kind).toBe('proceed');
    // beta dies in its handler: no finish, no release.
    await dying.close();
    expect(await onlyEntry()).toMatchObject({ state: 'settled', owner: expect.stringMatching(/^beta:/) });
    expect((await onlyEntry()).response).toBeUndefined();

    clock += AFTER_EVERYTHING_MS;
    const entry = await onlyEntry();
    expect(clock).toBeGreaterThan(entry.validBefore * 1000);
    expect(clock).toBeGreaterThan(entry.leaseUntil);

    const retry = await request(createGate('alpha'), payment);
    expect(retry.kind).toBe('proceed');
    expect(retry.response.status).toBe(200);
    expect(retry.settlement).toMatchObject({ success: true, transaction: TEST_TX });
    expect(decodeHeaderJson(retry.response.headers['payment-response']!)).toMatchObject({
      success: true,
      transaction: TEST_TX,
    });
    expect(Buffer.from(retry.response.body).toString()).toBe('{"run":1}');
    expect(handlerRuns).toBe(1);
    expect(facilitator.calls.settle).toBe(1);
    expect(await onlyEntry()).toMatchObject({ state: 'settled', response: { status: 200 } });
  });

  it('is served on its payer retry after the replay window when the reconciler found the lost settlement on chain', async () => {
    const gate = createGate('alpha');
    const payment = buildPayment(gate.routes.get('GET /first')!.requirements[0]!, {
      now: Math.floor(clock / 1000),
    });
    facilitator.settleScript = 'timeout';
    const lost = await request(gate, payment);
    expect(lost.response.status).toBe(502);
    expect(handlerRuns).toBe(0);
    facilitator.settleScript = 'success';
    scheme.reconcileAnswer = { status: 'settled', receipt: { success: true, transaction: TEST_TX, network } };
    expect(await gate.reconciler.runOnce()).toMatchObject({ confirmed: 1 });
    expect(await onlyEntry()).toMatchObject({ state: 'settled' });
    expect((await onlyEntry()).response).toBeUndefined();

    clock += AFTER_EVERYTHING_MS;
    const retry = await request(gate, payment);
    expect(retry.kind).toBe('proceed');
    expect(retry.response.status).toBe(200);
    expect(retry.settlement).toMatchObject({ success: true, transaction: TEST_TX });
    expect(handlerRuns).toBe(1);
    expect(facilitator.calls.settle).toBe(1);
  });

  it('bounds only a stored answer by the replay window: once served, a later retry is payment_already_used', async () => {
    const gate = createGate('alpha');
    const payment = buildPayment(gate.routes.get('GET /first')!.requirements[0]!, {
      now: Math.floor(clock / 1000),
    });
    const outcome = await gate.handle(pay(payment));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.release();
    clock += AFTER_EVERYTHING_MS;
    expect((await request(gate, payment)).response.status).toBe(200);
    const late = await request(gate, payment);
    expect(late.response.status).toBe(402);
    expect(errorOf(late.response)).toBe('payment_already_used');
    expect(handlerRuns).toBe(1);
    expect(facilitator.calls.settle).toBe(1);
  });
});

describe('a route that settles before its handler: one facilitator round trip', () => {
  const paymentFor = (gate: TollboothGate) =>
    buildPayment(gate.routes.get('GET /first')!.requirements[0]!, { now: Math.floor(clock / 1000) });

  it('goes straight to /settle: no /verify call, one /settle call, and the handler runs on the receipt', async () => {
    const gate = createGate('alpha');
    const paid = await request(gate, paymentFor(gate));
    expect(paid.response.status).toBe(200);
    expect(paid.settlement).toMatchObject({ success: true, transaction: TEST_TX });
    expect(facilitator.calls).toEqual({ verify: 0, settle: 1 });
    expect(handlerRuns).toBe(1);
    expect(await onlyEntry()).toMatchObject({ state: 'settled', response: { status: 200 } });
  });

  it('answers 402 with the reason code and records rejected when /settle refuses an invalid signature', async () => {
    const gate = createGate('alpha');
    const rejected: unknown[][] = [];
    facilitator.settleScript = 'invalid';
    const refused = await request(
      createGate('alpha', { hooks: { onRejected: (...args) => void rejected.push(args) } }),
      paymentFor(gate),
    );
    expect(refused.kind).toBe('respond');
    expect(refused.response.status).toBe(402);
    expect(errorOf(refused.response)).toBe('payment_signature_invalid');
    expect(rejected).toHaveLength(1);
    expect(facilitator.calls).toEqual({ verify: 0, settle: 1 });
    expect(handlerRuns).toBe(0);
    const entry = await onlyEntry();
    expect(entry).toMatchObject({ state: 'rejected', error: { code: 'payment_signature_invalid' } });
    expect(entry.leaseUntil).toBeLessThanOrEqual(clock + 10_000);
  });

  it('answers 503 facilitator_unavailable and gives the claim back when /settle never reached the facilitator', async () => {
    const gate = createGate('alpha');
    const payment = paymentFor(gate);
    facilitator.settleScript = 'unreachable';
    const down = await request(gate, payment);
    expect(down.response.status).toBe(503);
    expect(errorOf(down.response).code).toBe('facilitator_unavailable');
    expect(await store.query({})).toHaveLength(0);
    expect(handlerRuns).toBe(0);
    facilitator.settleScript = 'success';
    const retry = await request(gate, payment);
    expect(retry.response.status).toBe(200);
    expect(facilitator.calls).toEqual({ verify: 0, settle: 2 });
  });

  it('answers 502 and keeps the payment uncertain when /settle times out', async () => {
    const gate = createGate('alpha');
    facilitator.settleScript = 'timeout';
    const lost = await request(gate, paymentFor(gate));
    expect(lost.response.status).toBe(502);
    expect(errorOf(lost.response).code).toBe('settlement_uncertain');
    expect(await onlyEntry()).toMatchObject({ state: 'uncertain' });
    expect(facilitator.calls).toEqual({ verify: 0, settle: 1 });
  });

  it('asks /verify first with verifyBeforeSettle, and a refusal there never reaches /settle', async () => {
    const gate = createGate('alpha', { verifyBeforeSettle: true });
    expect((await request(gate, paymentFor(gate))).response.status).toBe(200);
    expect(facilitator.calls).toEqual({ verify: 1, settle: 1 });
    facilitator.verifyScript = 'invalid';
    const refused = await request(gate, paymentFor(gate));
    expect(refused.response.status).toBe(402);
    expect(facilitator.calls).toEqual({ verify: 2, settle: 1 });
  });
});
