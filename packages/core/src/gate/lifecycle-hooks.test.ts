// The gate's lifecycle hooks and a route's precondition, through its public entry point only: an
// application observes every step of a paid request (with the route and its price) and refuses a
// request before any challenge without matching routes itself.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createMemoryLedgerStore,
  createPaymentGate,
  decodeHeaderJson,
  encodeHeader,
  type GateHooks,
  type GateResponse,
  type PaymentPayload,
  type RequestView,
  type RoutesConfig,
  type TollboothGate,
} from '../index';
import { createScriptedFacilitator, type ScriptedFacilitator } from '../test-support/scripted-facilitator';
import { buildPayment, createQuietChainScheme, TEST_PAY_TO } from '../test-support/simple-scheme';

const BASE = 'https://api.example.com';
const network = 'eip155:8453';
const PATH = '/api/v1/fees/now';

let facilitator: ScriptedFacilitator;
let seen: string[];

/** Every hook, each noting its step with the route key, the amount and (on failure) status and code. */
function recordingHooks(): GateHooks {
  return {
    onMatched: (e) => seen.push(`matched ${e.route.key} ${e.route.requirements[0]!.amount} ${e.resource}`),
    onChallenge: (e) => seen.push(`challenge ${e.route.key} ${e.route.requirements[0]!.amount}`),
    onVerified: (e) =>
      seen.push(`verified ${e.route.key} ${e.payment.route} ${e.requestId === e.payment.requestId}`),
    onFailed: (e) => seen.push(`failed ${e.route.key} ${e.status} ${e.code}`),
    onSettled: (payment, receipt) => {
      seen.push(`settled ${payment.route} ${receipt.transaction !== ''}`);
    },
    onReplay: (entry) => seen.push(`replayed ${entry.route}`),
  };
}

function gateWith(routes?: RoutesConfig): TollboothGate {
  return createPaymentGate({
    routes: routes ?? { [`GET ${PATH}`]: { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' } } },
    schemes: [createQuietChainScheme()],
    facilitator,
    ledger: createMemoryLedgerStore({ purgeIntervalMs: 0 }),
    baseUrl: BASE,
    reconcileIntervalMs: 0,
    hooks: recordingHooks(),
  });
}

function view(path: string, headers: Record<string, string> = {}): RequestView {
  return { method: 'GET', url: `${BASE}${path}`, header: (name) => headers[name.toLowerCase()] };
}

async function answer(gate: TollboothGate, request: RequestView): Promise<GateResponse | 'passed'> {
  const outcome = await gate.handle(request);
  if (outcome.kind === 'pass') return 'passed';
  if (outcome.kind === 'respond' || outcome.kind === 'replay') return outcome.response;
  return outcome.settle({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"ok":true}'),
  });
}

function paymentFor(gate: TollboothGate): string {
  const payment: PaymentPayload = buildPayment(gate.routes.get(`GET ${PATH}`)!.requirements[0]!);
  return encodeHeader(payment);
}

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  seen = [];
});

describe('lifecycle hooks', () => {
  it('report a paid request step by step, with the route and its amount, and its replay', async () => {
    const gate = gateWith();
    expect(await answer(gate, view('/api/v1/free'))).toBe('passed');
    expect(seen).toEqual([]);
    expect(((await answer(gate, view(PATH))) as GateResponse).status).toBe(402);
    const value = paymentFor(gate);
    expect(((await answer(gate, view(PATH, { 'payment-signature': value }))) as GateResponse).status).toBe(
      200,
    );
    expect(((await answer(gate, view(PATH, { 'payment-signature': value }))) as GateResponse).status).toBe(
      200,
    );
    expect(seen).toEqual([
      `matched GET ${PATH} 1000 ${BASE}${PATH}`,
      `challenge GET ${PATH} 1000`,
      `matched GET ${PATH} 1000 ${BASE}${PATH}`,
      `verified GET ${PATH} GET ${PATH} true`,
      `settled GET ${PATH} true`,
      `matched GET ${PATH} 1000 ${BASE}${PATH}`,
      `replayed GET ${PATH}`,
    ]);
    await gate.close();
  });

  it('report a refused payment with its status and code, and a failed settlement after the handler', async () => {
    const gate = gateWith();
    facilitator.verifyScript = 'invalid';
    await answer(gate, view(PATH, { 'payment-signature': paymentFor(gate) }));
    facilitator.verifyScript = 'valid';
    facilitator.settleScript = 'failure';
    const settled = (await answer(
      gate,
      view(PATH, { 'payment-signature': paymentFor(gate) }),
    )) as GateResponse;
    expect(settled.status).toBe(402);
    const failures = seen.filter((step) => step.startsWith('failed'));
    expect(failures).toHaveLength(2);
    expect(failures[0]).toBe(`failed GET ${PATH} 402 payment_signature_invalid`);
    // The second payment was verified, its handler ran, then its settlement was refused.
    expect(seen.at(-2)).toBe(`verified GET ${PATH} GET ${PATH} true`);
    expect(seen.at(-1)).toMatch(/^failed GET \/api\/v1\/fees\/now 402 payment_[a-z_]+$/);
    expect(seen).not.toContain(`settled GET ${PATH} true`);
    await gate.close();
  });

  it('do not break the request when a hook throws', async () => {
    const gate = createPaymentGate({
      routes: { [`GET ${PATH}`]: { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' } } },
      schemes: [createQuietChainScheme()],
      facilitator,
      baseUrl: BASE,
      reconcileIntervalMs: 0,
      hooks: {
        onMatched: () => {
          throw new Error('a broken hook');
        },
        onChallenge: () => {
          throw new Error('a broken hook');
        },
      },
    });
    expect(((await answer(gate, view(PATH))) as GateResponse).status).toBe(402);
    await gate.close();
  });
});

describe('lifecycle hooks carry the request', () => {
  /** Every hook, each noting its step and the request object it was given. */
  function requestHooks(events: Array<[string, RequestView | undefined]>): GateHooks {
    return {
      onMatched: (e) => events.push(['matched', e.request]),
      onChallenge: (e) => events.push(['challenge', e.request]),
      onVerified: (e) => events.push(['verified', e.request]),
      onFailed: (e) => events.push([`failed ${e.status}`, e.request]),
      onSettled: (_payment, _receipt, request) => {
        events.push(['settled', request]);
      },
      onReleased: (_payment, status, request) => events.push([`released ${status}`, request]),
      onTransfer: (e) => events.push([`transfer ${e.via}`, e.request]),
      onReplay: (_entry, request) => events.push(['replayed', request]),
    };
  }

  function gateOn(store: ReturnType<typeof createMemoryLedgerStore>, hooks: GateHooks): TollboothGate {
    return createPaymentGate({
      routes: { [`GET ${PATH}`]: { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' } } },
      schemes: [createQuietChainScheme()],
      facilitator,
      ledger: store,
      baseUrl: BASE,
      reconcileIntervalMs: 0,
      hooks,
    });
  }

  /** The steps each request caused, by the request object the hooks were given. */
  function stepsOf(events: Array<[string, RequestView | undefined]>, requests: RequestView[]): string[][] {
    return requests.map((request) => events.filter(([, r]) => r === request).map(([step]) => step));
  }

  it('gives each event the request object that caused it: challenge, payment, transfer, replay', async () => {
    const events: Array<[string, RequestView | undefined]> = [];
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const gate = gateOn(store, requestHooks(events));
    const value = paymentFor(gate);
    const unpaid = view(PATH);
    const paying = view(PATH, { 'payment-signature': value });
    const again = view(PATH, { 'payment-signature': value });
    expect(((await answer(gate, unpaid)) as GateResponse).status).toBe(402);
    expect(((await answer(gate, paying)) as GateResponse).status).toBe(200);
    expect(((await answer(gate, again)) as GateResponse).status).toBe(200);
    // Another process, the same ledger: the replay is found in the ledger, not by its header text.
    const other = gateOn(store, requestHooks(events));
    const elsewhere = view(PATH, { 'payment-signature': value });
    expect(((await answer(other, elsewhere)) as GateResponse).status).toBe(200);
    expect(events.filter(([, request]) => request === undefined)).toEqual([]);
    expect(stepsOf(events, [unpaid, paying, again, elsewhere])).toEqual([
      ['matched', 'challenge'],
      ['matched', 'verified', 'transfer request', 'settled'],
      ['matched', 'replayed'],
      ['matched', 'replayed'],
    ]);
    expect(events).toHaveLength(10);
    await gate.close();
    await other.close();
  });

  it('gives the replay of a payment identifier answered from its first payment the request it answers', async () => {
    const events: Array<[string, RequestView | undefined]> = [];
    const gate = createPaymentGate({
      routes: {
        [`GET ${PATH}`]: {
          accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' },
          paymentIdentifier: true,
        },
      },
      schemes: [createQuietChainScheme()],
      facilitator,
      ledger: createMemoryLedgerStore({ purgeIntervalMs: 0 }),
      baseUrl: BASE,
      reconcileIntervalMs: 0,
      hooks: requestHooks(events),
    });
    const route = gate.routes.get(`GET ${PATH}`)!;
    const declared = (
      decodeHeaderJson(route.challenge(`${BASE}${PATH}`).header!) as {
        extensions: Record<string, { info: Record<string, unknown> }>;
      }
    ).extensions['payment-identifier']!;
    /** A newly signed payment (another nonce each time) under the same identifier. */
    const named = () =>
      encodeHeader({
        ...buildPayment(route.requirements[0]!),
        extensions: {
          'payment-identifier': {
            ...declared,
            info: { ...declared.info, id: 'pay_7d5d747be160e280504c099d984bcfe0' },
          },
        },
      });
    const first = { ...view(PATH, { 'payment-signature': named() }), body: async () => new Uint8Array() };
    const second = { ...view(PATH, { 'payment-signature': named() }), body: async () => new Uint8Array() };
    expect(((await answer(gate, first)) as GateResponse).status).toBe(200);
    expect(((await answer(gate, second)) as GateResponse).status).toBe(200);
    expect(stepsOf(events, [first, second])).toEqual([
      ['matched', 'verified', 'transfer request', 'settled'],
      ['matched', 'replayed'],
    ]);
    expect(events).toHaveLength(6);
    expect(facilitator.calls.settle).toBe(1);
    await gate.close();
  });

  it('gives a refusal, a failed settlement and a released claim the request that paid', async () => {
    const events: Array<[string, RequestView | undefined]> = [];
    const gate = gateOn(createMemoryLedgerStore({ purgeIntervalMs: 0 }), requestHooks(events));
    facilitator.verifyScript = 'invalid';
    const refused = view(PATH, { 'payment-signature': paymentFor(gate) });
    expect(((await answer(gate, refused)) as GateResponse).status).toBe(402);
    facilitator.verifyScript = 'valid';
    facilitator.settleScript = 'failure';
    const unsettled = view(PATH, { 'payment-signature': paymentFor(gate) });
    expect(((await answer(gate, unsettled)) as GateResponse).status).toBe(402);
    facilitator.settleScript = 'success';
    const handlerFailed = view(PATH, { 'payment-signature': paymentFor(gate) });
    const failing = await gate.handle(handlerFailed);
    if (failing.kind !== 'proceed') throw new Error(`expected proceed, got ${failing.kind}`);
    const answered = await failing.settle({ status: 500, headers: {}, body: Buffer.from('no') });
    expect(answered.status).toBe(500);
    const threw = view(PATH, { 'payment-signature': paymentFor(gate) });
    const throwing = await gate.handle(threw);
    if (throwing.kind !== 'proceed') throw new Error(`expected proceed, got ${throwing.kind}`);
    await throwing.release();
    expect(events.filter(([, request]) => request === undefined)).toEqual([]);
    expect(stepsOf(events, [refused, unsettled, handlerFailed, threw])).toEqual([
      ['matched', 'failed 402'],
      ['matched', 'verified', 'failed 402'],
      ['matched', 'verified', 'released 500'],
      ['matched', 'verified', 'released undefined'],
    ]);
    expect(facilitator.calls.settle).toBe(1);
    await gate.close();
  });
});

describe("a route's precondition", () => {
  const early: GateResponse = {
    status: 503,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"error":{"code":"no_validated_snapshot"}}'),
  };

  it('answers before any challenge or payment work, and is asked with the request and its match', async () => {
    const asked: string[] = [];
    let ready = false;
    const gate = gateWith({
      [`GET ${PATH}`]: {
        accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' },
        precondition: async (request, match) => {
          asked.push(`${request.method} ${match.route.key} ${match.resourceUrl}`);
          return ready ? undefined : early;
        },
      },
    });
    const value = paymentFor(gate);
    expect(await answer(gate, view(PATH, { 'payment-signature': value }))).toBe(early);
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
    expect(await answer(gate, view(PATH))).toBe(early);
    ready = true;
    expect(((await answer(gate, view(PATH))) as GateResponse).status).toBe(402);
    expect(((await answer(gate, view(PATH, { 'payment-signature': value }))) as GateResponse).status).toBe(
      200,
    );
    expect(asked).toEqual(Array(4).fill(`GET GET ${PATH} ${BASE}${PATH}`));
    // Its answer is the application's own: not reported as a failure.
    expect(seen.filter((step) => step.startsWith('failed'))).toEqual([]);
    await gate.close();
  });

  it('answers 503 internal_error (fail closed) when it throws', async () => {
    const gate = gateWith({
      [`GET ${PATH}`]: {
        accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' },
        precondition: () => {
          throw new Error('a broken precondition');
        },
      },
    });
    const response = (await answer(gate, view(PATH))) as GateResponse;
    expect(response.status).toBe(503);
    expect(JSON.parse(Buffer.from(response.body).toString('utf8'))).toMatchObject({
      error: { code: 'internal_error' },
    });
    expect(seen.at(-1)).toBe(`failed GET ${PATH} 503 internal_error`);
    await gate.close();
  });
});
