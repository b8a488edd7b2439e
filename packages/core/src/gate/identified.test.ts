// Payments carrying a payment identifier (identified.ts, docs/payment-identifier.md): the identifier
// is bound to the first request it paid for, per payer; the same request under it is answered from
// that payment, whatever payload it carries (never verified unless the scheme could not
// authenticate it, never settled), another request is a 409.
import { describe, expect, it } from 'vitest';
import { TollboothError } from '../errors/tollbooth-error';
import type { GateResponse, RequestView } from '../http/types';
import { encodeHeader } from '../protocol/codec';
import type { PaymentPayload } from '../protocol/schemas';
import {
  ACCEPTS,
  BASE,
  codeOf,
  createGateHarness,
  type GateHarness,
  handlerResponse,
  harnessRoutes,
} from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { TEST_PAYER } from '../test-support/simple-scheme';
import { requestFingerprint } from './request-fingerprint';
import type { Outcome } from './types';

const ID = 'pay_7d5d747be160e280504c099d984bcfe0';

/** A newly signed payment for GET /named carrying `id`. */
function named(h: GateHarness, id = ID, options: Parameters<GateHarness['payment']>[1] = {}): PaymentPayload {
  return {
    ...h.payment('GET /named', options),
    extensions: { 'payment-identifier': { info: { required: false, id } } },
  };
}

function request(
  payment: PaymentPayload,
  {
    method = 'GET',
    path = '/named',
    body,
  }: { method?: string; path?: string; body?: RequestView['body'] } = {},
): RequestView {
  const header = encodeHeader(payment);
  return {
    method,
    url: `${BASE}${path}`,
    header: (name) => (name.toLowerCase() === 'payment-signature' ? header : undefined),
    ...(body ? { body } : {}),
  };
}

function answerOf(outcome: Outcome): GateResponse {
  if (outcome.kind !== 'respond' && outcome.kind !== 'replay')
    throw new Error(`expected an answer, got ${outcome.kind}`);
  return outcome.response;
}

/** Pays GET /named with `payment` and runs a handler answering `{"run":n}`; the answer's body text. */
async function paid(h: GateHarness, payment: PaymentPayload, view = request(payment)): Promise<string> {
  const { response } = await h.run(view);
  return Buffer.from(response!.body).toString();
}

describe('the request an identifier is bound to', () => {
  it('keys the binding by the payer in any address case', async () => {
    const h = createGateHarness();
    const first = await paid(h, named(h));
    const again = named(h, ID, { authorization: { from: TEST_PAYER.toLowerCase() } });
    expect(await paid(h, again)).toBe(first);
    expect(h.facilitator.calls).toEqual({ verify: 1, settle: 1 });
  });

  it('is the same whatever the case of the method', async () => {
    const h = createGateHarness();
    const first = await paid(h, named(h));
    const again = named(h);
    expect(await paid(h, again, request(again, { method: 'get' }))).toBe(first);
  });

  it('reads the body with the maxIdentifiedBodyBytes cap, and a request without a body reader has an empty one', async () => {
    const h = createGateHarness({ gate: { maxIdentifiedBodyBytes: 10 } });
    const caps: number[] = [];
    const first = named(h);
    const body = async (max: number) => {
      caps.push(max);
      return new Uint8Array();
    };
    const answer = await paid(h, first, request(first, { body }));
    expect(caps).toEqual([10]);
    expect(await paid(h, named(h))).toBe(answer);
  });

  it('answers the error of a body reader that refuses the body, before anything is claimed', async () => {
    const h = createGateHarness();
    const payment = named(h);
    const body = async () => {
      throw new TollboothError('request_body_too_large', 'the body is longer than 10 bytes');
    };
    const response = answerOf(await h.gate.handle(request(payment, { body })));
    expect(response.status).toBe(413);
    expect(JSON.parse(Buffer.from(response.body).toString()).error).toMatchObject({
      code: 'request_body_too_large',
      message: 'the body is longer than 10 bytes',
    });
    expect(await h.store.query({})).toEqual([]);
  });

  it('answers 503 internal_error when the body cannot be read at all', async () => {
    const h = createGateHarness();
    const payment = named(h);
    const body = async () => {
      throw new Error('socket hang up');
    };
    expect(codeOf(answerOf(await h.gate.handle(request(payment, { body }))))).toBe('internal_error');
  });

  it('answers 409 payment_identifier_conflict, never charging, for another request under it', async () => {
    const h = createGateHarness({
      routes: { ...harnessRoutes(), 'GET /other': { accepts: ACCEPTS, paymentIdentifier: true } },
    });
    await paid(h, named(h));
    const other = { ...named(h), accepted: h.requirementOf('GET /other') };
    const response = answerOf(await h.gate.handle(request(other, { path: '/other' })));
    expect(response.status).toBe(409);
    expect(JSON.parse(Buffer.from(response.body).toString()).error).toMatchObject({
      code: 'payment_identifier_conflict',
      message: 'this payment identifier was used for a different request; use a new identifier',
    });
    expect(h.facilitator.calls).toEqual({ verify: 1, settle: 1 });
  });
});

describe('two payments sent at once under one identifier', () => {
  it('charges one and answers the other from it', async () => {
    const h = createGateHarness();
    // Both look the identifier up before either binds it: each claims its own payment first.
    let arrived = 0;
    let bothArrived!: () => void;
    const both = new Promise<void>((resolve) => {
      bothArrived = resolve;
    });
    const getIdentifier = h.store.getIdentifier.bind(h.store);
    h.store.getIdentifier = async (key) => {
      const found = await getIdentifier(key);
      arrived += 1;
      if (arrived === 2) bothArrived();
      if (arrived <= 2) await both;
      return found;
    };
    const [a, b] = await Promise.all([h.run(request(named(h))), h.run(request(named(h)))]);
    expect(a.handlerRuns + b.handlerRuns).toBe(1);
    expect(Buffer.from(a.response!.body).toString()).toBe(Buffer.from(b.response!.body).toString());
    expect(h.facilitator.calls.settle).toBe(1);
    expect((await h.onlyEntry()).state).toBe('settled');
  });
});

describe('an identifier bound to another payment each time it is bound', () => {
  // Each claim finds the identifier taken by another payment, which the lookup then no longer
  // finds: look again, at most eight times, then 409 (never a request that spins on the store).
  it('gives up with 409 payment_in_progress after eight tries, charging nothing', async () => {
    const h = createGateHarness();
    h.store.getIdentifier = async () => undefined;
    let binds = 0;
    h.store.bindIdentifier = async (binding) => {
      binds++;
      return { bound: false, binding: { ...binding, entry: 'someone-else', version: 1 } };
    };
    const response = answerOf(await h.gate.handle(request(named(h))));
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    expect(binds).toBe(8);
    expect(await h.store.query({})).toEqual([]);
    expect(h.facilitator.calls.verify).toBe(0);
  });
});

describe('a binding found taken by the same payment for another request', () => {
  it('is bound anew to this request, so its retry gets its answer', async () => {
    const h = createGateHarness();
    const payment = named(h);
    // Request ?a=1 pays with it; verify refuses it: the claim is given back, its binding stays.
    h.facilitator.verifyScript = 'invalid';
    expect(codeOf(answerOf(await h.gate.handle(request(payment, { path: '/named?a=1' }))))).toBe(
      'payment_signature_invalid',
    );
    h.facilitator.verifyScript = 'valid';
    // Request ?b=2 sends the same payment under the same identifier, having looked the identifier
    // up before ?a=1 bound it: binding it, it finds the binding of its own payment for ?a=1.
    const getIdentifier = h.store.getIdentifier.bind(h.store);
    let raced = false;
    h.store.getIdentifier = async (key) => {
      if (raced) return getIdentifier(key);
      raced = true;
      return undefined;
    };
    const first = await h.run(request(payment, { path: '/named?b=2' }));
    expect(first.response?.status).toBe(200);
    const retry = await h.gate.handle(request(named(h), { path: '/named?b=2' }));
    expect(retry.kind).toBe('replay');
    expect(Buffer.from(answerOf(retry).body).toString()).toBe(Buffer.from(first.response!.body).toString());
    expect(h.facilitator.calls.settle).toBe(1);
  });
});

describe('an identifier whose payment charged nothing', () => {
  it('is free again once that settlement was refused: the next payment under it is charged', async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'failure';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    expect(codeOf((await h.run(request(named(h)))).response)).toBe('payment_insufficient_funds');
    h.facilitator.settleScript = 'success';
    const { response } = await h.run(request(named(h)));
    expect(response?.status).toBe(200);
    expect(h.facilitator.calls.settle).toBe(2);
  });

  it('is free again once that payment is gone from the ledger', async () => {
    const h = createGateHarness();
    await paid(h, named(h));
    const [entry] = await h.store.query({});
    await h.store.remove(entry!.id, { state: ['settled'], owner: entry!.owner });
    expect((await h.run(request(named(h)))).handlerRuns).toBe(1);
    expect(h.facilitator.calls.settle).toBe(2);
  });
});

describe('a released identifier retried at once with its own payload and a fresh one', () => {
  // Both read the binding of a payment that charged nothing; only one may take the identifier
  // (the store replaces a binding only at the version read), so only one payment is settled.
  it.each([
    ['the same gate', (h: GateHarness) => h.gate],
    ['two gates sharing the store', (h: GateHarness) => h.another()],
  ])('settles one of them on %s, and answers both with its answer', async (_where, other) => {
    const h = createGateHarness();
    const first = named(h);
    expect((await h.run(request(first), 500)).response?.status).toBe(500);
    expect(await h.store.query({})).toEqual([]);
    const [same, fresh] = await Promise.all([h.run(request(first)), h.run(request(named(h)), 200, other(h))]);
    expect(h.facilitator.calls.settle).toBe(1);
    expect(same.handlerRuns + fresh.handlerRuns).toBe(1);
    expect(Buffer.from(same.response!.body).toString()).toBe(Buffer.from(fresh.response!.body).toString());
    const binding = await h.store.getIdentifier(`${TEST_PAYER.toLowerCase()}:${ID}`);
    expect(binding).toMatchObject({ entry: (await h.onlyEntry()).id, version: 2 });
  });
});

describe('the ledger failing under an identifier', () => {
  it('answers 503 ledger_unavailable, logged, when the binding cannot be looked up', async () => {
    const h = createGateHarness();
    const down = new Error('down');
    h.store.getIdentifier = async () => {
      throw down;
    };
    const response = answerOf(await h.gate.handle(request(named(h))));
    expect(codeOf(response)).toBe('ledger_unavailable');
    expect(h.logger.lines).toEqual([
      {
        level: 'error',
        fields: { err: down, requestId: response.headers['x-request-id'] },
        message: 'ledger identifier lookup failed',
      },
    ]);
  });

  it('answers 503 ledger_unavailable, logged, and gives the claim back when the binding cannot be written', async () => {
    const h = createGateHarness();
    const down = new Error('down');
    h.store.bindIdentifier = async () => {
      throw down;
    };
    const response = answerOf(await h.gate.handle(request(named(h))));
    expect(codeOf(response)).toBe('ledger_unavailable');
    expect(h.logger.lines).toEqual([
      {
        level: 'error',
        fields: { err: down, requestId: response.headers['x-request-id'] },
        message: 'ledger identifier binding failed',
      },
    ]);
    expect(await h.store.query({})).toEqual([]);
  });

  it.each([
    ['looked up', (h: GateHarness) => (h.store.getIdentifier = () => Promise.reject(new Error('x')))],
    ['written', (h: GateHarness) => (h.store.bindIdentifier = () => Promise.reject(new Error('x')))],
  ] as const)(
    'answers ledger_unavailable without a logger when the binding cannot be %s',
    async (_what, fail) => {
      const h = createGateHarness({ gate: { logger: undefined } });
      fail(h);
      expect(codeOf(answerOf(await h.gate.handle(request(named(h)))))).toBe('ledger_unavailable');
    },
  );

  it('answers 409 payment_in_progress when no scheme serves the payment the identifier is bound to', async () => {
    const h = createGateHarness();
    const bound = await h.seed(
      named(h),
      { state: 'uncertain', requirements: { ...h.requirementOf('GET /named'), scheme: 'upto' } },
      'GET /named',
    );
    await h.store.bindIdentifier({
      key: `${TEST_PAYER.toLowerCase()}:${ID}`,
      fingerprint: requestFingerprint({
        method: 'GET',
        resourceUrl: `${BASE}/named`,
        query: undefined,
        body: new Uint8Array(),
      }),
      entry: bound.id,
      createdAt: bound.createdAt,
      expiresAt: bound.expiresAt,
    });
    const response = answerOf(await h.gate.handle(request(named(h))));
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    expect(h.facilitator.calls).toEqual({ verify: 0, settle: 0 });
  });
});

describe('a payment answered from the payment its identifier is bound to', () => {
  it('replays the stored answer with onReplay for this request, neither verifying nor settling the new payload', async () => {
    const h = createGateHarness();
    const first = await paid(h, named(h));
    const view = request(named(h));
    const outcome = await h.gate.handle(view);
    expect(outcome.kind).toBe('replay');
    expect(Buffer.from(answerOf(outcome).body).toString()).toBe(first);
    expect(h.recorder.of('onReplay')).toEqual([[expect.objectContaining({ state: 'settled' }), view]]);
    expect(h.facilitator.calls).toEqual({ verify: 1, settle: 1 });
  });

  it("replays the stored answer after the first payment's replay window too (the binding lasts as long as its entry)", async () => {
    const h = createGateHarness();
    const first = await paid(h, named(h));
    h.clock.advance(5 * 60_000);
    const outcome = await h.gate.handle(request(named(h)));
    expect(outcome.kind).toBe('replay');
    expect(Buffer.from(answerOf(outcome).body).toString()).toBe(first);
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('waits for that payment in flight in this process, then replays its answer', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const first = await h.gate.handle(request(named(h)));
    if (first.kind !== 'proceed') throw new Error('expected proceed');
    const waiting = h.gate.handle(request(named(h)));
    await h.checked(2); // the duplicate waits now
    const sent = await first.settle(handlerResponse(200, '{"first":1}'));
    const answer = await waiting;
    expect(answer.kind).toBe('replay');
    expect(Buffer.from(answerOf(answer).body).toString()).toBe(Buffer.from(sent.body).toString());
    expect(h.facilitator.calls).toEqual({ verify: 1, settle: 1 });
  });

  it('settles the stored payload again, not the new one, when that payment is uncertain and the chain shows it unused', async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'timeout';
    const first = named(h);
    expect((await h.run(request(first))).response?.status).toBe(502);
    h.facilitator.settleScript = 'success';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const settled: unknown[] = [];
    const settle = h.facilitator.settle.bind(h.facilitator);
    h.facilitator.settle = (payload, requirements) => {
      settled.push(payload);
      return settle(payload, requirements);
    };
    const outcome = await h.gate.handle(request(named(h)));
    expect(outcome.kind).toBe('replay');
    expect(settled).toEqual([first]);
    expect((await h.onlyEntry()).state).toBe('settled');
    // The flight ended with the answer: the next retry is answered at once.
    expect((await h.gate.handle(request(named(h)))).kind).toBe('replay');
  });

  it('answers every retry 502 while that payment stays uncertain (each retry ends its own flight)', async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'timeout';
    expect((await h.run(request(named(h)))).response?.status).toBe(502);
    for (let retry = 0; retry < 2; retry++) {
      const response = answerOf(await h.gate.handle(request(named(h))));
      expect(codeOf(response)).toBe('settlement_uncertain');
    }
    expect(h.scheme.reconcileCalls).toBe(2);
  });

  it('runs the handler for a payment settled before its handler, keeping its flight until it settles', async () => {
    const h = createGateHarness({
      routes: { 'GET /named': { accepts: ACCEPTS, paymentIdentifier: true, settle: 'before-handler' } },
      gate: { inFlightWaitMs: 0 },
    });
    expect(codeOf((await h.run(request(named(h)), 500)).response)).toBe('paid_response_unavailable');
    const retry = await h.gate.handle(request(named(h)));
    if (retry.kind !== 'proceed') throw new Error('expected proceed');
    expect(retry.payment.settlement).toMatchObject({ success: true, transaction: TEST_TX });
    expect(retry.payment.payer).toBe(TEST_PAYER);
    const duplicate = h.gate.handle(request(named(h)));
    await h.checked(3); // the duplicate waits now
    const sent = await retry.settle(handlerResponse(200, '{"late":1}'));
    expect(Buffer.from(answerOf(await duplicate).body).toString()).toBe(Buffer.from(sent.body).toString());
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('never gives a payload the scheme could not authenticate anything before the facilitator verified it', async () => {
    const h = createGateHarness();
    const first = await paid(h, named(h));
    const verify = h.facilitator.verify;
    const unchecked = () => named(h, ID, { signature: `0xc0${'33'.repeat(80)}` });
    h.facilitator.verifyScript = 'timeout';
    expect(codeOf(answerOf(await h.gate.handle(request(unchecked()))))).toBe('facilitator_unavailable');
    h.facilitator.verifyScript = 'invalid';
    const refused = answerOf(await h.gate.handle(request(unchecked())));
    expect(refused.status).toBe(402);
    expect(codeOf(refused)).toBe('payment_signature_invalid');
    h.facilitator.verify = async () => ({ isValid: false });
    expect(codeOf(answerOf(await h.gate.handle(request(unchecked()))))).toBe('payment_verification_failed');
    expect(h.recorder.of('onRejected').map((call) => call.slice(1))).toEqual([
      ['payment_signature_invalid', 'invalid_exact_evm_signature'],
      ['payment_verification_failed', 'invalid'],
    ]);
    h.facilitator.verify = async () => ({
      isValid: false,
      invalidReason: 'odd',
      invalidMessage: 'not yours',
    });
    await h.gate.handle(request(unchecked()));
    expect(h.recorder.of('onRejected').at(-1)?.slice(1)).toEqual([
      'payment_verification_failed',
      'not yours',
    ]);
    h.facilitator.verifyScript = 'valid';
    h.facilitator.verify = verify;
    const verified = await h.gate.handle(request(unchecked()));
    expect(Buffer.from(answerOf(verified).body).toString()).toBe(first);
    expect(h.facilitator.calls.settle).toBe(1);
  });
});
