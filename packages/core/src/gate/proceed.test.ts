import { beforeEach, describe, expect, it } from 'vitest';
import { EXPOSED_PAYMENT_HEADERS } from '../http/paid-response';
import type { HandlerResponse } from '../http/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import type { LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import { codeOf, createGateHarness, handlerResponse } from '../test-support/gate-harness';
import {
  createScriptedFacilitator,
  type ScriptedFacilitator,
  TEST_TX,
} from '../test-support/scripted-facilitator';
import { buildPayment, createSimpleScheme, TEST_PAY_TO, TEST_PAYER } from '../test-support/simple-scheme';
import { createPaymentGate, type TollboothGate } from './create-payment-gate';
import type { Outcome } from './types';

const origin = 'https://api.example.com';
const handled: HandlerResponse = {
  status: 200,
  headers: { 'content-type': 'text/plain' },
  body: Buffer.from('ok'),
};

let facilitator: ScriptedFacilitator;
let ledger: LedgerStore;
let gate: TollboothGate;

beforeEach(() => {
  [facilitator, ledger] = [createScriptedFacilitator(), createMemoryLedgerStore({ purgeIntervalMs: 0 })];
  gate = createPaymentGate({
    routes: { 'GET /paid': { accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' } } },
    schemes: [createSimpleScheme()],
    facilitator,
    ledger,
    baseUrl: origin,
    reconcileIntervalMs: 0,
  });
  return () => gate.close();
});

async function proceedWith(header: string): Promise<Extract<Outcome, { kind: 'proceed' }>> {
  const outcome = await gate.handle({
    method: 'GET',
    url: `${origin}/paid`,
    header: (name) => (name === 'payment-signature' ? header : undefined),
  });
  if (outcome.kind !== 'proceed') throw new Error(`expected proceed, got ${outcome.kind}`);
  return outcome;
}

/** The settlement receipt a paid answer carries in PAYMENT-RESPONSE, decoded. */
const receiptOf = (response: HandlerResponse) =>
  decodeHeaderJson(response.headers['payment-response'] as string);
const settledReceipt = { success: true, transaction: TEST_TX, network: 'eip155:8453', payer: TEST_PAYER };

describe('the proceed outcome', () => {
  it('settles through its own settle(), once: a later settle or finish passes the answer through', async () => {
    const outcome = await proceedWith(
      encodeHeader(buildPayment(gate.routes.get('GET /paid')!.requirements[0]!)),
    );
    const paid = await outcome.settle(handled);
    expect(receiptOf(paid)).toEqual(settledReceipt);
    expect(facilitator.calls.settle).toBe(1);
    expect((await ledger.get(outcome.payment.identity))?.state).toBe('settled');
    for (const again of [await outcome.settle(handled), await outcome.settle(handled)]) {
      expect(again.headers['payment-response']).toBeUndefined();
      expect(Buffer.from(again.body).toString()).toBe('ok');
    }
    expect(facilitator.calls.settle).toBe(1);
  });

  it('gives the claim back through its own release(), and settles nothing after it', async () => {
    const header = encodeHeader(buildPayment(gate.routes.get('GET /paid')!.requirements[0]!));
    const outcome = await proceedWith(header);
    await outcome.release();
    expect(await ledger.get(outcome.payment.identity)).toBeUndefined();
    expect((await outcome.settle(handled)).headers['payment-response']).toBeUndefined();
    expect(facilitator.calls.settle).toBe(0);
    // The payer may pay again with the same payload: it is claimed afresh.
    const retry = await proceedWith(header);
    expect(receiptOf(await retry.settle(handled))).toEqual(settledReceipt);
    expect(facilitator.calls.settle).toBe(1);
  });
});

// The harness's gate (alpha, manual clock, recording hooks and logger): each test builds its own.
describe('the handler failing after a settlement before it ran', () => {
  it.each([400, 503])(
    'tells the payer it was charged (503 with the receipt) when it answers %i, and frees the entry',
    async (status) => {
      const h = createGateHarness();
      const outcome = await h.gate.handle(h.pay(h.payment('GET /first'), '/first'));
      if (outcome.kind !== 'proceed') throw new Error('expected proceed');
      const response = await outcome.settle(handlerResponse(status));
      expect(response.status).toBe(503);
      expect(codeOf(response)).toBe('paid_response_unavailable');
      expect(receiptOf(response)).toEqual(outcome.payment.settlement);
      expect(await h.onlyEntry()).toMatchObject({ state: 'settled', leaseUntil: 0 });
      expect((await h.onlyEntry()).response).toBeUndefined();
      expect(h.logger.lines).toContainEqual({
        level: 'warn',
        fields: { requestId: outcome.payment.requestId, id: (await h.onlyEntry()).id, status },
        message: 'handler failed after settlement; a retry of the payload runs it again',
      });
      expect(h.recorder.of('onFailed')).toEqual([
        [
          expect.objectContaining({
            requestId: outcome.payment.requestId,
            status: 503,
            code: 'paid_response_unavailable',
          }),
        ],
      ]);
      expect(h.recorder.of('onSettled')).toEqual([]);
    },
  );

  it('stores a 399 answer as the paid one, with the receipt, and reports onSettled', async () => {
    const h = createGateHarness();
    const view = h.pay(h.payment('GET /first'), '/first');
    const outcome = await h.gate.handle(view);
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    const response = await outcome.settle(handlerResponse(399, 'odd but fine'));
    expect(response.status).toBe(399);
    expect(receiptOf(response)).toEqual(outcome.payment.settlement);
    const entry = await h.onlyEntry();
    expect(entry.response?.status).toBe(399);
    expect(Buffer.from(entry.response!.body).toString()).toBe('odd but fine');
    expect(h.recorder.of('onSettled')).toEqual([[outcome.payment, outcome.payment.settlement, view]]);
  });

  it('frees the entry with the receipt kept when the handler threw, and the retry runs it again', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const payment = h.payment('GET /first');
    const outcome = await h.gate.handle(h.pay(payment, '/first'));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.release();
    const entry = await h.onlyEntry();
    expect(entry).toMatchObject({ state: 'settled', leaseUntil: 0 });
    expect(h.recorder.of('onReleased')).toEqual([]);
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: { requestId: outcome.payment.requestId, id: entry.id },
      message: 'handler threw after settlement; a retry of the payload runs it again',
    });
    const retry = await h.run(h.pay(payment, '/first'));
    expect(retry.handlerRuns).toBe(1);
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('tells the payer it was charged when its answer cannot be read', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.pay(h.payment('GET /first'), '/first'));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    const response = await outcome.settle({ status: 200, headers: null as never, body: Buffer.from('') });
    expect(codeOf(response)).toBe('paid_response_unavailable');
    expect(receiptOf(response)).toEqual(outcome.payment.settlement);
    expect(h.logger.messages('error')).toEqual(['payment finish failed']);
  });

  it('still hands over the receipt when freeing that entry fails and the logger throws on it', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.pay(h.payment('GET /first'), '/first'));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    h.store.update = async () => {
      throw new Error('store down');
    };
    const logError = h.logger.error;
    h.logger.error = (fields, message) => {
      logError(fields, message);
      if (message === 'ledger update failed') throw new Error('logger down');
    };
    const response = await outcome.settle({ status: 200, headers: null as never, body: Buffer.from('') });
    expect(codeOf(response)).toBe('paid_response_unavailable');
    expect(receiptOf(response)).toEqual(outcome.payment.settlement);
    expect(h.logger.messages('error')).toEqual(['payment finish failed', 'ledger update failed']);
  });
});

describe('the handler failing before any settlement', () => {
  it.each([400, 500])(
    'gives the claim back and passes its %i answer through, reported to onReleased',
    async (status) => {
      const h = createGateHarness();
      const view = h.pay(h.payment());
      const outcome = await h.gate.handle(view);
      if (outcome.kind !== 'proceed') throw new Error('expected proceed');
      const response = await outcome.settle(handlerResponse(status, 'no'));
      expect(response.status).toBe(status);
      expect(Buffer.from(response.body).toString()).toBe('no');
      expect(response.headers['access-control-expose-headers']).toBe(EXPOSED_PAYMENT_HEADERS);
      expect(await h.store.query({})).toEqual([]);
      expect(h.recorder.of('onReleased')).toEqual([[outcome.payment, status, view]]);
      expect(h.facilitator.calls.settle).toBe(0);
    },
  );

  it('settles a 399 answer', async () => {
    const h = createGateHarness();
    const { response } = await h.run(h.pay(h.payment()), 399);
    expect(receiptOf(response!)).toMatchObject({ success: true });
  });

  it('logs a release the store refused, and still answers the handler', async () => {
    const h = createGateHarness();
    const down = new Error('down');
    h.store.remove = async () => {
      throw down;
    };
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    expect((await outcome.settle(handlerResponse(500))).status).toBe(500);
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: { err: down, requestId: outcome.payment.requestId },
      message: 'ledger release failed',
    });
    const quiet = createGateHarness({ gate: { logger: undefined } });
    quiet.store.remove = async () => {
      throw down;
    };
    const second = await quiet.gate.handle(quiet.pay(quiet.payment()));
    if (second.kind !== 'proceed') throw new Error('expected proceed');
    expect((await second.settle(handlerResponse(500))).status).toBe(500);
  });

  it('reports onReleased without a status when the handler threw', async () => {
    const h = createGateHarness();
    const view = h.pay(h.payment());
    const outcome = await h.gate.handle(view);
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.release();
    expect(h.recorder.of('onReleased')).toEqual([[outcome.payment, undefined, view]]);
    expect(await h.store.query({})).toEqual([]);
  });

  it('releases once: a second release, or one after the settlement, does nothing', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.release();
    await outcome.release();
    expect(h.recorder.of('onReleased')).toHaveLength(1);
    const settled = await h.gate.handle(h.pay(h.payment()));
    if (settled.kind !== 'proceed') throw new Error('expected proceed');
    await settled.settle(handlerResponse());
    await settled.release();
    expect(h.recorder.of('onReleased')).toHaveLength(1);
    expect((await h.store.query({ state: 'settled' })).length).toBe(1);
  });

  it('answers 502 settlement_uncertain, logged, when the answer cannot be read', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    const response = await outcome.settle({ status: 200, headers: null as never, body: Buffer.from('') });
    expect(response.status).toBe(502);
    expect(codeOf(response)).toBe('settlement_uncertain');
    expect(h.logger.lines).toContainEqual({
      level: 'error',
      fields: { err: expect.any(TypeError), requestId: outcome.payment.requestId },
      message: 'payment finish failed',
    });
    expect(h.recorder.of('onFailed')).toEqual([
      [
        expect.objectContaining({
          status: 502,
          code: 'settlement_uncertain',
          resource: 'https://api.example.com/paid',
        }),
      ],
    ]);
  });
});

describe('a settlement after the handler', () => {
  it('reports onSettled with the payment, the receipt and the request, and answers the stored paid response', async () => {
    const h = createGateHarness();
    const view = h.pay(h.payment());
    const outcome = await h.gate.handle(view);
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    const response = await outcome.settle(handlerResponse(200, 'paid'));
    expect(h.recorder.of('onSettled')).toEqual([[outcome.payment, receiptOf(response), view]]);
    const entry = await h.onlyEntry();
    expect(response.headers).toEqual(entry.response!.headers);
    expect(h.recorder.of('onFailed')).toEqual([]);
  });

  it('reports a failed settlement to onFailed with the route and the request', async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'failure';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const view = h.pay(h.payment());
    const outcome = await h.gate.handle(view);
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.settle(handlerResponse(200));
    const [[event]] = h.recorder.of('onFailed') as [[Record<string, unknown>]];
    expect(event).toEqual({
      requestId: outcome.payment.requestId,
      request: view,
      route: h.gate.routes.get('GET /paid'),
      resource: 'https://api.example.com/paid',
      status: 402,
      code: 'payment_insufficient_funds',
    });
    expect(h.recorder.of('onSettled')).toEqual([]);
  });
});
