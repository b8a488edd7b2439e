// Strict replay (`replay: 'strict'`, docs/ledger.md#replay-a-stance): the exact payload of a
// payment its own request settled and answered is refused 402 payment_already_used, byte-identical
// or not, within the window or not, by payload or by a bound payment identifier; a payment in
// flight is still waited for, an uncertain one still reconciled, an answer resolved after its
// request still served, a payment settled before its handler still gets its handler run.
import { describe, expect, it } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import type { PaymentPayload } from '../protocol/schemas';
import { codeOf, createGateHarness, type GateHarness } from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { TEST_PAYER } from '../test-support/simple-scheme';
import { createPaymentGate } from './create-payment-gate';

const strict = () => createGateHarness({ gate: { replay: 'strict' } });
const receipt = { success: true, transaction: TEST_TX, network: 'eip155:8453', payer: TEST_PAYER };

/** The same payment in other header bytes (authorization keys reversed). */
function reordered(payment: PaymentPayload): PaymentPayload {
  const authorization = (payment.payload as { authorization: Record<string, string> }).authorization;
  const reversed = Object.fromEntries(Object.entries(authorization).reverse());
  return { ...payment, payload: { authorization: reversed, signature: payment.payload.signature } };
}

/** Sends a request and runs the handler when told to proceed: what the client gets. */
async function statusOf(h: GateHarness, payment: PaymentPayload, path = '/paid') {
  const { response } = await h.run(h.pay(payment, path));
  return { status: response!.status, code: response!.status === 200 ? undefined : codeOf(response) };
}

describe('strict replay', () => {
  it('refuses the exact payload of a payment its request answered, in the same bytes or others, without settling or running anything again', async () => {
    const h = strict();
    const payment = h.payment();
    expect(await statusOf(h, payment)).toEqual({ status: 200, code: undefined });
    for (const again of [payment, payment, reordered(payment)])
      expect(await statusOf(h, again)).toEqual({ status: 402, code: 'payment_already_used' });
    expect(h.facilitator.calls).toEqual({ verify: 1, settle: 1 });
    expect(h.recorder.of('onReplay')).toEqual([]);
    expect(h.recorder.of('onRejected').at(-1)?.slice(1)).toEqual([
      'payment_already_used',
      'this payment was settled and answered; this server answers a payment once',
    ]);
    // By design, not an alarm: each refusal is an info line naming the entry, never a warning.
    const entry = await h.onlyEntry();
    const refusals = h.logger.lines.filter((l) => l.message.includes('(strict replay)'));
    expect(refusals.map((l) => [l.level, l.fields['id']])).toEqual([
      ['info', entry.id],
      ['info', entry.id],
      ['info', entry.id],
    ]);
    expect(h.logger.messages('warn')).toEqual([]);
    // The refusal carries the route's challenge: a client can pay anew.
    const { response } = await h.run(h.pay(payment));
    expect(response!.headers['payment-required']).toEqual(expect.any(String));
  });

  it('answers one of five concurrent requests with the payment: the others wait for it, then are refused', async () => {
    const h = strict();
    const payment = h.payment();
    const results = await Promise.all(Array.from({ length: 5 }, () => statusOf(h, payment)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 402 && r.code === 'payment_already_used')).toHaveLength(4);
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('answers five concurrent requests alike by default: one handler run, one settlement, five stored answers', async () => {
    const h = createGateHarness();
    const payment = h.payment();
    const results = await Promise.all(Array.from({ length: 5 }, () => h.run(h.pay(payment))));
    expect(results.map((r) => r.response!.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => Buffer.from(r.response!.body).toString())).size).toBe(1);
    expect(results.reduce((runs, r) => runs + r.handlerRuns, 0)).toBe(1);
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('still serves an answer resolved after its request ended, whenever the exact payload comes back', async () => {
    const h = strict();
    const payment = h.payment();
    h.facilitator.settleScript = 'timeout';
    expect((await h.run(h.pay(payment))).response!.status).toBe(502);
    h.scheme.reconcileAnswer = { status: 'settled', receipt };
    expect(await h.gate.reconciler.runOnce()).toMatchObject({ confirmed: 1 });
    for (let i = 0; i < 2; i++) expect((await statusOf(h, payment)).status).toBe(200);
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('still reconciles an uncertain payment retried with its payload, and answers it from the chain', async () => {
    const h = strict();
    const payment = h.payment();
    h.facilitator.settleScript = 'timeout';
    expect((await h.run(h.pay(payment))).response!.status).toBe(502);
    h.scheme.reconcileAnswer = { status: 'settled', receipt };
    const retry = await h.run(h.pay(payment));
    expect(retry.response!.status).toBe(200);
    expect(retry.handlerRuns).toBe(0);
    expect(await h.onlyEntry()).toMatchObject({ state: 'settled', resolution: { by: 'retry' } });
  });

  it('still runs the handler of a payment settled before it, once', async () => {
    const h = strict();
    const payment = h.payment('GET /first');
    await h.seed(payment, { state: 'settled', receipt }, 'GET /first');
    const first = await h.run(h.pay(payment, '/first'));
    expect(first.response!.status).toBe(200);
    expect(first.handlerRuns).toBe(1);
    expect(await statusOf(h, payment, '/first')).toEqual({ status: 402, code: 'payment_already_used' });
  });

  it('refuses the same request under a bound payment identifier once it was answered', async () => {
    const h = strict();
    const named = (): PaymentPayload => ({
      ...h.payment('GET /named'),
      extensions: { 'payment-identifier': { info: { required: false, id: 'pay_0123456789abcdef' } } },
    });
    expect((await statusOf(h, named(), '/named')).status).toBe(200);
    // Another payload under the same identifier for the same request: answered from the bound payment.
    expect(await statusOf(h, named(), '/named')).toEqual({ status: 402, code: 'payment_already_used' });
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('is refused as an option other than stored-answer or strict', () => {
    const h = createGateHarness();
    expect(() => createPaymentGate({ ...h.options, replay: 'never' as never })).toThrow(TollboothConfigError);
    expect(() => createPaymentGate({ ...h.options, replay: 'never' as never })).toThrow(
      /replay must be 'stored-answer' or 'strict', not "never"/,
    );
  });
});
