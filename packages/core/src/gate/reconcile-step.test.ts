// A retry of an uncertain payment (reconcile-step.ts, docs/ledger.md "Reconcile"): the chain
// decides; without a chain reader the facilitator is asked again while the authorization is valid.
import { describe, expect, it } from 'vitest';
import type { GateResponse } from '../http/types';
import type { PaymentPayload, SettleResponse } from '../protocol/schemas';
import {
  codeOf,
  createGateHarness,
  type GateHarness,
  NETWORK,
  receiptOf,
} from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { TEST_PAYER } from '../test-support/simple-scheme';
import type { Outcome } from './types';

const ON_CHAIN: SettleResponse = { success: true, transaction: TEST_TX, network: NETWORK, payer: TEST_PAYER };

/** A payment whose settle answer was lost: uncertain, its handler's answer stored. */
async function uncertainPayment(h: GateHarness, key = 'GET /paid', header = 'payment-signature') {
  h.facilitator.settleScript = 'timeout';
  const payment = h.payment(key);
  const path = key.slice(4);
  const first = await h.run(h.pay(payment, path, header));
  expect(first.response?.status).toBe(502);
  h.facilitator.settleScript = 'success';
  return payment;
}

function answerOf(outcome: Outcome): GateResponse {
  if (outcome.kind !== 'respond' && outcome.kind !== 'replay')
    throw new Error(`expected an answer, got ${outcome.kind}`);
  return outcome.response;
}

const resolutionBy = (h: GateHarness, action: string, note: string) => ({
  by: 'retry',
  instance: 'alpha',
  at: h.clock.now,
  from: 'uncertain',
  action,
  attempts: 0,
  note,
});

describe('the chain shows the transfer', () => {
  it('records it settled with the receipt and resolution, and replays the stored answer with it', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    h.scheme.reconcileAnswer = { status: 'settled', receipt: ON_CHAIN };
    const outcome = await h.gate.handle(h.pay(payment));
    expect(outcome.kind).toBe('replay');
    expect(receiptOf(answerOf(outcome))).toEqual(ON_CHAIN);
    const entry = await h.onlyEntry();
    const resolution = resolutionBy(h, 'confirmed-on-chain', `transfer ${TEST_TX}`);
    expect(entry).toMatchObject({ state: 'settled', receipt: ON_CHAIN, transaction: TEST_TX, resolution });
    expect(receiptOf(entry.response!)).toEqual(ON_CHAIN);
    expect(h.recorder.of('onTransfer')).toEqual([
      [expect.objectContaining({ id: entry.id, transaction: TEST_TX, via: 'retry' })],
    ]);
    expect(h.recorder.of('onResolved')).toEqual([
      [{ id: entry.id, route: 'GET /paid', network: NETWORK, payer: TEST_PAYER }, resolution],
    ]);
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('asks the chain about the transaction already known for the payment', async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'pending';
    const payment = h.payment();
    await h.run(h.pay(payment));
    const asked: Array<string | undefined> = [];
    h.scheme.reconcileAnswer = (input) => {
      asked.push(input.transaction);
      return { status: 'unknown', message: 'still pending' };
    };
    await h.gate.handle(h.pay(payment));
    expect(asked).toEqual([TEST_TX]);
  });

  it('puts the receipt in X-PAYMENT-RESPONSE for a payment sent in X-PAYMENT', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h, 'GET /paid', 'x-payment');
    h.scheme.reconcileAnswer = { status: 'settled', receipt: ON_CHAIN };
    const response = answerOf(await h.gate.handle(h.pay(payment, '/paid', 'x-payment')));
    expect(receiptOf(response, 'x-payment-response')).toEqual(ON_CHAIN);
    expect(response.headers['payment-response']).toBeUndefined();
  });

  it('records no transaction for a receipt without one', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    h.scheme.reconcileAnswer = { status: 'settled', receipt: { ...ON_CHAIN, transaction: '' } };
    expect((await h.gate.handle(h.pay(payment))).kind).toBe('replay');
    expect(await h.onlyEntry()).not.toHaveProperty('transaction');
  });

  it('runs the handler with the receipt when the payment settled before its handler and holds no answer', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h, 'GET /first');
    h.scheme.reconcileAnswer = { status: 'settled', receipt: ON_CHAIN };
    const outcome = await h.gate.handle(h.pay(payment, '/first'));
    if (outcome.kind !== 'proceed') throw new Error(`expected proceed, got ${outcome.kind}`);
    expect(outcome.payment.settlement).toEqual(ON_CHAIN);
    const entry = await h.onlyEntry();
    expect(entry.state).toBe('settled');
    expect(entry.response).toBeUndefined();
    expect(entry.leaseUntil).toBeGreaterThan(h.clock.now);
    const paid = await outcome.settle({
      status: 200,
      headers: {},
      body: Buffer.from('late'),
    });
    expect(receiptOf(paid)).toEqual(ON_CHAIN);
  });
});

describe('the chain shows the authorization expired unused', () => {
  it('records it rejected with payment_expired, free, and answers 402 payment_expired', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    h.scheme.reconcileAnswer = { status: 'expired' };
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(402);
    expect(codeOf(response)).toBe('payment_expired');
    const resolution = resolutionBy(h, 'expired-unused', 'the authorization expired unused');
    expect(await h.onlyEntry()).toMatchObject({
      state: 'rejected',
      leaseUntil: 0,
      error: { code: 'payment_expired', message: 'the authorization expired unused' },
      resolution,
    });
    expect(h.recorder.of('onResolved')).toEqual([[expect.anything(), resolution]]);
    expect(h.recorder.of('onRejected').at(-1)?.slice(1)).toEqual([
      'payment_expired',
      'the authorization expired unused',
    ]);
    expect(h.facilitator.calls.settle).toBe(1);
  });
});

describe('the chain shows no transfer yet', () => {
  it('settles again and replays the answer as now stored, with the new receipt', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const outcome = await h.gate.handle(h.pay(payment));
    if (outcome.kind !== 'replay') throw new Error(`expected replay, got ${outcome.kind}`);
    expect(outcome.entry.state).toBe('settled');
    expect(receiptOf(outcome.response)).toEqual(ON_CHAIN);
    expect(h.facilitator.calls.settle).toBe(2);
  });

  it('answers the failure of the re-settle as it is', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    h.facilitator.settleScript = '5xx';
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(502);
    expect(codeOf(response)).toBe('settlement_uncertain');
  });

  it('runs the handler after the re-settle of a payment that settles before its handler', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h, 'GET /first');
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const outcome = await h.gate.handle(h.pay(payment, '/first'));
    if (outcome.kind !== 'proceed') throw new Error(`expected proceed, got ${outcome.kind}`);
    expect(outcome.payment.settlement).toEqual(ON_CHAIN);
    expect((await h.onlyEntry()).leaseUntil).toBeGreaterThan(h.clock.now);
  });
});

describe('the chain cannot tell', () => {
  it('keeps it uncertain and free, with the resolution, and answers 502 with the reason', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    h.scheme.reconcileAnswer = { status: 'unknown', message: 'node unreachable' };
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(502);
    expect(JSON.parse(Buffer.from(response.body).toString()).error).toMatchObject({
      code: 'settlement_uncertain',
      message: 'node unreachable',
    });
    expect(await h.onlyEntry()).toMatchObject({
      state: 'uncertain',
      leaseUntil: 0,
      resolution: resolutionBy(h, 'unresolved', 'node unreachable'),
    });
    expect(h.facilitator.calls.settle).toBe(1);
  });
});

describe('a payment whose scheme has no chain reader', () => {
  /** The uncertain payment of a gate whose scheme reads no chain for its network. */
  async function withoutReader(h: GateHarness, how: 'no reconcile' | 'no reader for the network') {
    const payment = await uncertainPayment(h);
    if (how === 'no reconcile') delete (h.scheme as { reconcile?: unknown }).reconcile;
    else Object.assign(h.scheme, { hasChainReader: (network: string) => network !== NETWORK });
    return payment;
  }

  it.each(['no reconcile', 'no reader for the network'] as const)(
    'asks the facilitator again while the authorization is valid (%s)',
    async (how) => {
      const h = createGateHarness();
      const payment = await withoutReader(h, how);
      const outcome = await h.gate.handle(h.pay(payment));
      expect(outcome.kind).toBe('replay');
      expect(h.facilitator.calls.settle).toBe(2);
    },
  );

  it('stays uncertain from the last millisecond of the authorization on', async () => {
    const h = createGateHarness();
    const payment: PaymentPayload = await withoutReader(h, 'no reconcile');
    const validBefore = Number(
      (payment.payload as { authorization: { validBefore: string } }).authorization.validBefore,
    );
    h.clock.now = validBefore * 1000;
    expect(answerOf(await h.gate.handle(h.pay(payment))).status).toBe(502);
    expect(h.facilitator.calls.settle).toBe(1);
    h.clock.now = validBefore * 1000 - 1;
    expect((await h.gate.handle(h.pay(payment))).kind).toBe('replay');
  });

  it('does not ask the facilitator again when a chain reader exists and cannot tell', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    Object.assign(h.scheme, { hasChainReader: () => true });
    expect(answerOf(await h.gate.handle(h.pay(payment))).status).toBe(502);
    expect(h.facilitator.calls.settle).toBe(1);
  });
});

describe('an uncertain payment another process keeps taking first', () => {
  it('is looked at again, at most eight times, then answered 409 payment_in_progress', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    const update = h.store.update.bind(h.store);
    let takeOvers = 0;
    h.store.update = async (id, expected, patch) => {
      if (patch.owner !== undefined) {
        takeOvers++;
        return undefined;
      }
      return update(id, expected, patch);
    };
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    expect(takeOvers).toBe(8);
    expect(h.scheme.reconcileCalls).toBe(0);
  });

  it('reports no resolution when its rejection could not be recorded', async () => {
    const h = createGateHarness();
    const payment = await uncertainPayment(h);
    h.scheme.reconcileAnswer = { status: 'expired' };
    const update = h.store.update.bind(h.store);
    h.store.update = async (id, expected, patch) =>
      patch.state === 'rejected' ? undefined : update(id, expected, patch);
    expect(codeOf(answerOf(await h.gate.handle(h.pay(payment))))).toBe('payment_expired');
    expect(h.recorder.of('onResolved')).toEqual([]);
  });
});
