// Claiming a payment in the ledger and verifying it (claim.ts): single flight inside one process,
// the bounded retries of a claim that keeps changing, and what a payer is answered when the
// store or the facilitator fails on the way.
import { describe, expect, it } from 'vitest';
import type { VerifyResponse } from '../protocol/schemas';
import {
  codeOf,
  createGateHarness,
  type GateHarness,
  handlerResponse,
  receiptOf,
} from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { TEST_PAYER } from '../test-support/simple-scheme';
import type { Outcome } from './types';

function proceeding(outcome: Outcome): Extract<Outcome, { kind: 'proceed' }> {
  if (outcome.kind !== 'proceed') throw new Error(`expected proceed, got ${outcome.kind}`);
  return outcome;
}

function answered(outcome: Outcome) {
  if (outcome.kind !== 'respond' && outcome.kind !== 'replay')
    throw new Error(`expected an answer, got ${outcome.kind}`);
  return outcome.response;
}

/** A facilitator whose verify answers `verdict` (payer included). */
function verifyAnswers(h: GateHarness, verdict: VerifyResponse) {
  h.facilitator.verify = async () => verdict;
}

describe('single flight inside one process', () => {
  // inFlightWaitMs 0: a duplicate that found the entry held elsewhere would answer 409 at once,
  // so only the in-process wait can give it the paid answer.
  it('makes a duplicate wait for the payment in flight and answers it the stored response', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const payment = h.payment();
    const first = proceeding(await h.gate.handle(h.pay(payment)));
    const duplicate = h.gate.handle(h.pay(payment));
    await h.checked(2); // the duplicate waits now
    const sent = await first.settle(handlerResponse(200, '{"a":1}'));
    const answer = await duplicate;
    expect(answer.kind).toBe('replay');
    expect(Buffer.from(answered(answer).body).equals(Buffer.from(sent.body))).toBe(true);
    expect(answered(answer).headers).toEqual(sent.headers);
    expect(h.facilitator.calls).toEqual({ verify: 1, settle: 1 });
  });

  it('lets a duplicate claim the payment afresh once the first was released (its handler failed)', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const payment = h.payment();
    const first = proceeding(await h.gate.handle(h.pay(payment)));
    const duplicate = h.gate.handle(h.pay(payment));
    await h.checked(2); // the duplicate waits now
    expect((await first.settle(handlerResponse(500))).status).toBe(500);
    const second = proceeding(await duplicate);
    const paid = await second.settle(handlerResponse(200));
    expect(receiptOf(paid)).toMatchObject({ success: true, transaction: TEST_TX });
    expect(h.facilitator.calls).toEqual({ verify: 2, settle: 1 });
  });

  it('answers a duplicate the stored refusal once the settlement in flight was refused', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    h.facilitator.settleScript = 'failure';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const payment = h.payment();
    const first = proceeding(await h.gate.handle(h.pay(payment)));
    const duplicate = h.gate.handle(h.pay(payment));
    await h.checked(2); // the duplicate waits now
    expect(codeOf(await first.settle(handlerResponse(200)))).toBe('payment_insufficient_funds');
    const answer = answered(await duplicate);
    expect(answer.status).toBe(402);
    expect(codeOf(answer)).toBe('payment_insufficient_funds');
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('keeps the flight of a payment settled before its handler while the retry runs the handler', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const payment = h.payment('GET /first');
    expect(codeOf((await h.run(h.pay(payment, '/first'), 500)).response)).toBe('paid_response_unavailable');
    const retry = proceeding(await h.gate.handle(h.pay(payment, '/first')));
    const duplicate = h.gate.handle(h.pay(payment, '/first'));
    await h.checked(3); // the duplicate waits now
    const sent = await retry.settle(handlerResponse(200, '{"b":2}'));
    const answer = await duplicate;
    expect(answer.kind).toBe('replay');
    expect(Buffer.from(answered(answer).body).toString()).toBe(Buffer.from(sent.body).toString());
    expect(h.facilitator.calls.settle).toBe(1);
  });
});

describe('a claim that keeps changing', () => {
  // Each claim finds an entry whose owner died, and loses the race to remove it: look again, at
  // most eight times, then 409 (never a request that spins on the store).
  it('gives up with 409 payment_in_progress after eight claims', async () => {
    const h = createGateHarness();
    let claims = 0;
    h.store.claim = async (entry) => {
      claims++;
      return { acquired: false, entry: { ...entry, owner: 'gone:r', leaseUntil: 0 } };
    };
    const response = answered(await h.gate.handle(h.pay(h.payment())));
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    expect(claims).toBe(8);
    expect(h.facilitator.calls.verify).toBe(0);
  });

  it('answers 409, and frees the flight, when the claim changed before it was marked verified', async () => {
    const h = createGateHarness();
    const verify = h.facilitator.verify.bind(h.facilitator);
    let taken = false;
    h.facilitator.verify = async (payload, requirements) => {
      if (!taken) {
        taken = true;
        const [entry] = await h.store.query({});
        await h.store.remove(entry!.id, { state: ['claimed'], owner: entry!.owner });
      }
      return verify(payload, requirements);
    };
    const payment = h.payment();
    const response = answered(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    // The flight ended: the retry is claimed afresh instead of waiting for ever.
    expect((await h.run(h.pay(payment))).response?.status).toBe(200);
  });
});

describe('failures while claiming and verifying', () => {
  it('answers 503 ledger_unavailable, logged, when the claim cannot reach the store', async () => {
    const h = createGateHarness();
    const down = new Error('connection refused');
    h.store.claim = async () => {
      throw down;
    };
    const response = answered(await h.gate.handle(h.pay(h.payment(), '/paid')));
    expect(response.status).toBe(503);
    expect(codeOf(response)).toBe('ledger_unavailable');
    expect(h.logger.lines).toEqual([
      {
        level: 'error',
        fields: { err: down, requestId: response.headers['x-request-id'] },
        message: 'ledger claim failed',
      },
    ]);
  });

  it('answers 503 facilitator_unavailable, logged, and gives the claim back when verify has no answer', async () => {
    const h = createGateHarness();
    h.facilitator.verifyScript = 'timeout';
    const response = answered(await h.gate.handle(h.pay(h.payment())));
    expect(codeOf(response)).toBe('facilitator_unavailable');
    expect(h.logger.messages('warn')).toEqual(['facilitator verify failed']);
    expect(h.logger.lines[0]!.fields).toMatchObject({
      err: expect.objectContaining({ kind: 'timeout' }),
      requestId: response.headers['x-request-id'],
    });
    expect(await h.store.query({})).toEqual([]);
  });

  it.each([
    [
      'ledger_unavailable',
      (h: GateHarness): void => {
        h.store.claim = () => Promise.reject(new Error('x'));
      },
    ],
    [
      'facilitator_unavailable',
      (h: GateHarness): void => {
        h.facilitator.verifyScript = '5xx';
      },
    ],
  ] as const)('answers %s without a logger too', async (code, fail) => {
    const h = createGateHarness({ gate: { logger: undefined } });
    fail(h);
    expect(codeOf(answered(await h.gate.handle(h.pay(h.payment()))))).toBe(code);
  });

  it.each([
    [
      'its reason family and message',
      {
        isValid: false,
        invalidReason: 'invalid_exact_evm_insufficient_balance',
        invalidMessage: 'balance is 0',
      },
      'payment_insufficient_funds',
      'balance is 0',
    ],
    [
      'its reason when it gives no message',
      { isValid: false, invalidReason: 'odd_reason' },
      'payment_verification_failed',
      'odd_reason',
    ],
    ['"invalid" when it gives no reason', { isValid: false }, 'payment_verification_failed', 'invalid'],
  ] as const)(
    'refuses an invalid payment with %s, and gives the claim back',
    async (_what, verdict, code, message) => {
      const h = createGateHarness();
      verifyAnswers(h, { ...verdict, payer: TEST_PAYER });
      const response = answered(await h.gate.handle(h.pay(h.payment(), '/paid')));
      expect(response.status).toBe(402);
      expect(codeOf(response)).toBe(code);
      expect(h.recorder.of('onRejected')).toEqual([[response.headers['x-request-id'], code, message]]);
      expect(await h.store.query({})).toEqual([]);
    },
  );

  it('gives the claim back and answers 503 internal_error when marking it verified fails', async () => {
    const h = createGateHarness();
    const update = h.store.update.bind(h.store);
    h.store.update = async (id, expect, patch) => {
      if (patch.state === 'verified') throw new Error('write failed');
      return update(id, expect, patch);
    };
    const payment = h.payment();
    const response = answered(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(503);
    expect(codeOf(response)).toBe('internal_error');
    expect(await h.store.query({})).toEqual([]);
    expect(h.logger.messages('error')).toEqual(['payment gate failed']);
  });
});

describe('a route that settles before its handler', () => {
  it('settles right after verify: the handler runs with the receipt', async () => {
    const h = createGateHarness();
    const outcome = proceeding(await h.gate.handle(h.pay(h.payment('GET /first'), '/first')));
    expect(outcome.payment.settlement).toEqual({
      success: true,
      transaction: TEST_TX,
      network: 'eip155:8453',
      payer: TEST_PAYER,
    });
    expect((await h.onlyEntry()).state).toBe('settled');
  });

  it('runs no handler when the settlement is refused, and frees the flight for the retry', async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'failure';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const payment = h.payment('GET /first');
    const response = answered(await h.gate.handle(h.pay(payment, '/first')));
    expect(response.status).toBe(402);
    expect(codeOf(response)).toBe('payment_insufficient_funds');
    const again = answered(await h.gate.handle(h.pay(payment, '/first')));
    expect(codeOf(again)).toBe('payment_insufficient_funds');
    expect(h.facilitator.calls.settle).toBe(1);
  });
});
