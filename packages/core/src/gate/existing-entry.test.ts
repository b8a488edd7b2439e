// A payment whose identity is already in the ledger (existing-entry.ts, docs/ledger.md "What a
// retry gets"): held by another instance, left by a dead one, settled, rejected, another resource.
import { describe, expect, it } from 'vitest';
import type { GateResponse } from '../http/types';
import type { LedgerEntry } from '../ledger/types';
import type { PaymentPayload } from '../protocol/schemas';
import {
  BASE,
  codeOf,
  createGateHarness,
  type GateHarness,
  handlerResponse,
  NETWORK,
} from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { TEST_PAYER } from '../test-support/simple-scheme';
import type { Outcome } from './types';

const stored: GateResponse = {
  status: 200,
  headers: { 'content-type': 'application/json', 'payment-response': 'receipt' },
  body: Buffer.from('{"paid":true}'),
};
const receipt = { success: true, transaction: TEST_TX, network: NETWORK, payer: TEST_PAYER };
const LIVE = () => Date.now() + 3_600_000;

function answerOf(outcome: Outcome): GateResponse {
  if (outcome.kind !== 'respond' && outcome.kind !== 'replay')
    throw new Error(`expected an answer, got ${outcome.kind}`);
  return outcome.response;
}

/** The same payment in other header bytes (authorization keys reversed): never the byte-identical shortcut. */
function reordered(payment: PaymentPayload): PaymentPayload {
  const authorization = (payment.payload as { authorization: Record<string, string> }).authorization;
  const reversed = Object.fromEntries(Object.entries(authorization).reverse());
  return { ...payment, payload: { authorization: reversed, signature: payment.payload.signature } };
}

/** Whether an outcome replays the stored response (status, headers, bytes). */
function replays(outcome: Outcome, response = stored): boolean {
  if (outcome.kind !== 'replay') return false;
  const sent = outcome.response;
  return (
    sent.status === response.status &&
    JSON.stringify(sent.headers) === JSON.stringify(response.headers) &&
    Buffer.from(sent.body).equals(Buffer.from(response.body))
  );
}

/** The message the onRejected hook got for the last refusal. */
const lastRejection = (h: GateHarness) => h.recorder.of('onRejected').at(-1);

describe('an entry another instance is working on', () => {
  it('is waited for, and its stored response replayed once it settled', async () => {
    const h = createGateHarness();
    const other = h.another();
    const payment = h.payment();
    const first = await other.handle(h.pay(payment));
    if (first.kind !== 'proceed') throw new Error('expected proceed');
    const waiting = h.gate.handle(h.pay(payment));
    const sent = await first.settle(handlerResponse(200, '{"other":1}'));
    const answer = await waiting;
    expect(answer.kind).toBe('replay');
    expect(Buffer.from(answerOf(answer).body).toString()).toBe(Buffer.from(sent.body).toString());
    expect(h.facilitator.calls).toEqual({ verify: 1, settle: 1 });
  });

  it('is claimed afresh when the other instance gave it back while this one waited', async () => {
    const h = createGateHarness();
    const other = h.another();
    const payment = h.payment();
    const first = await other.handle(h.pay(payment));
    if (first.kind !== 'proceed') throw new Error('expected proceed');
    const waiting = h.gate.handle(h.pay(payment));
    await first.settle(handlerResponse(500));
    expect((await waiting).kind).toBe('proceed');
  });

  it('is waited for inFlightWaitMs on the gate clock, then answered 409 payment_in_progress', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 200 } });
    const payment = h.payment();
    await h.seed(payment, { state: 'verified', owner: 'beta:r-1', leaseUntil: LIVE() });
    const get = h.store.get.bind(h.store);
    h.store.get = (id) => {
      h.clock.advance(50);
      return get(id);
    };
    const start = h.clock.now;
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    expect(h.clock.now - start).toBe(200);
  });

  it('is answered 409 at once with an inFlightWaitMs of 0', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const payment = h.payment();
    await h.seed(payment, { state: 'settling', owner: 'beta:r-1', leaseUntil: LIVE() });
    expect(codeOf(answerOf(await h.gate.handle(h.pay(payment))))).toBe('payment_in_progress');
  });

  it('is waited for while settled with its handler running, but a stored answer or refusal is given at once', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const running = h.payment('GET /first');
    await h.seed(running, { state: 'settled', receipt, owner: 'beta:r-1', leaseUntil: LIVE() }, 'GET /first');
    expect(codeOf(answerOf(await h.gate.handle(h.pay(running, '/first'))))).toBe('payment_in_progress');
    const answered = h.payment();
    await h.seed(answered, {
      state: 'settled',
      receipt,
      response: stored,
      owner: 'beta:r-2',
      leaseUntil: LIVE(),
    });
    expect(replays(await h.gate.handle(h.pay(answered)))).toBe(true);
    const refused = h.payment();
    await h.seed(refused, {
      state: 'rejected',
      error: { code: 'payment_insufficient_funds', message: 'no funds' },
      owner: 'beta:r-3',
      leaseUntil: LIVE(),
    });
    expect(codeOf(answerOf(await h.gate.handle(h.pay(refused))))).toBe('payment_insufficient_funds');
  });
});

describe('an entry whose owner stopped renewing its lease', () => {
  it.each(['claimed', 'verified'] as const)(
    'is removed when %s (nothing was spent) and claimed afresh',
    async (state) => {
      const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
      const payment = h.payment();
      await h.seed(payment, { state });
      const outcome = await h.gate.handle(h.pay(payment));
      expect(outcome.kind).toBe('proceed');
      expect((await h.onlyEntry()).owner).toMatch(/^alpha:/);
      expect(h.recorder.of('onResolved')).toEqual([]);
    },
  );

  it('is taken over at once when its owner is this instance and request, from before a restart', async () => {
    const h = createGateHarness({ gate: { inFlightWaitMs: 0 } });
    const payment = h.payment();
    await h.seed(payment, { state: 'verified', owner: 'alpha:r-1', leaseUntil: LIVE() });
    const outcome = await h.gate.handle({
      ...h.pay(payment),
      header: (n) => (n === 'x-request-id' ? 'r-1' : h.pay(payment).header(n)),
    });
    expect(outcome.kind).toBe('proceed');
  });

  it('is marked uncertain when it was settling, reported as abandoned, and reconciled', async () => {
    const h = createGateHarness();
    const payment = h.payment();
    const entry = await h.seed(payment, { state: 'settling', response: stored });
    h.scheme.reconcileAnswer = { status: 'settled', receipt };
    const outcome = await h.gate.handle(h.pay(payment));
    expect(outcome.kind).toBe('replay');
    expect(Buffer.from(answerOf(outcome).body).toString()).toBe('{"paid":true}');
    const [abandoned] = h.recorder.of('onResolved');
    expect(abandoned).toEqual([
      { id: entry.id, route: 'GET /paid', network: NETWORK, payer: TEST_PAYER },
      {
        by: 'retry',
        instance: 'alpha',
        at: h.clock.now,
        from: 'settling',
        action: 'abandoned',
        attempts: 0,
        note: 'owner dead:r-0 stopped renewing its lease',
      },
    ]);
    expect(h.facilitator.calls.settle).toBe(0);
  });
});

describe("the payload's resource (not covered by the signature)", () => {
  it('is neither compared nor recorded: the payment binds to the route it was sent to, and another resource refuses it afterwards', async () => {
    const h = createGateHarness();
    // Signed for /first (same price), sent to /paid: an EIP-3009 signature covers the
    // authorization only, so the resource a client wrote proves nothing either way.
    const payment = h.payment('GET /paid', { resource: `${BASE}/first` });
    const first = await h.run(h.pay(payment, '/paid'));
    expect(first.response?.status).toBe(200);
    expect(await h.onlyEntry()).toMatchObject({
      state: 'settled',
      resource: `${BASE}/paid`,
      route: 'GET /paid',
    });
    // The ledger, not the payload, binds the payment: at the resource it names it is refused.
    const elsewhere = answerOf(await h.gate.handle(h.pay(payment, '/first')));
    expect(codeOf(elsewhere)).toBe('payment_already_used');
    expect(h.facilitator.calls.settle).toBe(1);
  });
});

describe('a settled entry', () => {
  it('refuses a payment made for another resource with payment_already_used', async () => {
    const h = createGateHarness();
    const payment = h.payment();
    const entry = await h.seed(payment, {
      state: 'settled',
      receipt,
      response: stored,
      resource: `${BASE}/elsewhere`,
    });
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(402);
    expect(codeOf(response)).toBe('payment_already_used');
    expect(lastRejection(h)?.slice(1)).toEqual([
      'payment_already_used',
      'this payment was made for another resource',
    ]);
    expect(h.logger.lines.filter((l) => l.level === 'warn')).toEqual([
      {
        level: 'warn',
        fields: {
          requestId: response.headers['x-request-id'],
          id: entry.id,
          state: 'settled',
          resource: `${BASE}/paid`,
          why: 'made for another resource',
        },
        message: 'a retry of a charged payment was refused (payment_already_used)',
      },
    ]);
  });

  it('does not log a refused payment made for another resource when nothing was charged for it (rejected)', async () => {
    const h = createGateHarness();
    const payment = h.payment();
    await h.seed(payment, { state: 'rejected', resource: `${BASE}/elsewhere` });
    expect(codeOf(answerOf(await h.gate.handle(h.pay(payment))))).toBe('payment_already_used');
    expect(h.logger.messages('warn')).toEqual([]);
  });

  it('replays to a payload the scheme cannot authenticate only when it is the stored one, in any key order', async () => {
    const h = createGateHarness();
    const payment = h.payment('GET /paid', { signature: `0xc0${'11'.repeat(80)}` });
    await h.seed(payment, { state: 'settled', receipt, response: stored });
    expect(replays(await h.gate.handle(h.pay(reordered(payment))))).toBe(true);
    const forged = { ...payment, payload: { ...payment.payload, signature: `0xc0${'22'.repeat(80)}` } };
    const response = answerOf(await h.gate.handle(h.pay(forged)));
    expect(codeOf(response)).toBe('payment_already_used');
    expect(lastRejection(h)?.slice(1)).toEqual([
      'payment_already_used',
      'this payment identity is already in use',
    ]);
  });

  it('replays up to the end of the replay window, and refuses from that very millisecond', async () => {
    const h = createGateHarness();
    const payment = h.payment();
    const entry = await h.seed(payment, { state: 'settled', receipt, response: stored });
    // The window ends at validBefore, and lasts at least maxTimeoutSeconds (60) from the first request.
    const until = Math.max(entry.validBefore * 1000, entry.createdAt + 60_000);
    h.clock.now = until - 1;
    expect(replays(await h.gate.handle(h.pay(reordered(payment))))).toBe(true);
    expect(h.recorder.of('onReplay')).toEqual([
      [expect.objectContaining({ id: entry.id }), expect.anything()],
    ]);
    h.clock.now = until;
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(codeOf(response)).toBe('payment_already_used');
    expect(lastRejection(h)?.slice(1)).toEqual([
      'payment_already_used',
      'the replay window of this payment has ended',
    ]);
    // The payer was charged: an operator sees the refusal, with the entry.
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: {
        requestId: response.headers['x-request-id'],
        id: entry.id,
        state: 'settled',
        resource: `${BASE}/paid`,
        why: 'replay window ended',
      },
      message: 'a retry of a charged payment was refused (payment_already_used)',
    });
  });

  it.each(['reconciler', 'retry'] as const)(
    'replays an answer its request never delivered (resolved later by the %s) after the replay window, until the ledger lets the entry go',
    async (by) => {
      const h = createGateHarness();
      const payment = h.payment();
      const entry = await h.seed(payment, {
        state: 'settled',
        receipt,
        response: stored,
        resolution: {
          by,
          instance: 'alpha',
          at: h.clock.now,
          from: 'uncertain',
          action: 'confirmed-on-chain',
          attempts: 1,
        },
      });
      const window = Math.max(entry.validBefore * 1000, entry.createdAt + 60_000);
      h.clock.now = entry.createdAt + 2 * 60_000;
      expect(h.clock.now).toBeGreaterThan(window);
      expect(replays(await h.gate.handle(h.pay(payment)))).toBe(true);
      // Byte-identical again: the in-process shortcut keeps the same bound.
      expect(replays(await h.gate.handle(h.pay(payment)))).toBe(true);
      h.clock.now = entry.expiresAt - 1;
      expect(replays(await h.gate.handle(h.pay(reordered(payment))))).toBe(true);
      h.clock.now = entry.expiresAt;
      const response = answerOf(await h.gate.handle(h.pay(payment)));
      expect(codeOf(response)).toBe('payment_already_used');
      expect(h.facilitator.calls.settle).toBe(0);
    },
  );

  it('answers a retry at twice maxTimeoutSeconds with the stored answer when the settle answer was lost and the reconciler found the transfer', async () => {
    const h = createGateHarness();
    const payment = h.payment();
    h.facilitator.settleScript = 'timeout';
    const lost = await h.run(h.pay(payment));
    expect(lost.response?.status).toBe(502);
    h.scheme.reconcileAnswer = { status: 'settled', receipt };
    expect(await h.gate.reconciler.runOnce()).toMatchObject({ confirmed: 1 });
    const entry = await h.onlyEntry();
    expect(entry).toMatchObject({ state: 'settled', resolution: { by: 'reconciler' } });

    h.clock.now += 2 * 60_000;
    expect(h.clock.now).toBeGreaterThan(Math.max(entry.validBefore * 1000, entry.createdAt + 60_000));
    const retry = answerOf(await h.gate.handle(h.pay(payment)));
    expect(retry.status).toBe(200);
    expect(Buffer.from(retry.body).toString()).toBe('{"run":1}');
    expect(retry).toEqual(entry.response);
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('runs the handler, with the stored receipt, when it holds no answer yet', async () => {
    const h = createGateHarness();
    const payment = h.payment('GET /first');
    await h.seed(payment, { state: 'settled', receipt }, 'GET /first');
    const outcome = await h.gate.handle(h.pay(payment, '/first'));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    expect(outcome.payment.settlement).toEqual(receipt);
    const entry = await h.onlyEntry();
    expect(entry.owner).toMatch(/^alpha:/);
    expect(entry.leaseUntil).toBeGreaterThan(h.clock.now);
  });
});

describe('a settled entry without an answer another process keeps taking over', () => {
  it('is looked at again, at most eight times, then answered 409: its handler never runs here', async () => {
    const h = createGateHarness();
    const payment = h.payment('GET /first');
    await h.seed(payment, { state: 'settled', receipt }, 'GET /first');
    const update = h.store.update.bind(h.store);
    let takeOvers = 0;
    h.store.update = async (id, expected, patch) => {
      if (patch.owner === undefined) return update(id, expected, patch);
      takeOvers++;
      return undefined;
    };
    const response = answerOf(await h.gate.handle(h.pay(payment, '/first')));
    expect(response.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    expect(takeOvers).toBe(8);
  });
});

describe('a rejected entry', () => {
  it.each([
    [
      'its stored code and message',
      { code: 'payment_expired', message: 'expired unused' },
      'payment_expired',
      'expired unused',
    ],
    [
      'payment_settlement_failed for a code it does not know',
      { code: 'odd', message: 'odd' },
      'payment_settlement_failed',
      'odd',
    ],
    [
      'payment_settlement_failed and a plain message without an error',
      undefined,
      'payment_settlement_failed',
      'the payment was rejected',
    ],
  ] as const)('answers 402 with %s', async (_what, error, code, message) => {
    const h = createGateHarness();
    const payment = h.payment();
    await h.seed(payment, { state: 'rejected', ...(error ? { error } : {}) } as Partial<LedgerEntry>);
    const response = answerOf(await h.gate.handle(h.pay(payment)));
    expect(response.status).toBe(402);
    expect(codeOf(response)).toBe(code);
    expect(lastRejection(h)?.slice(1)).toEqual([code, message]);
    expect(h.facilitator.calls).toEqual({ verify: 0, settle: 0 });
  });
});
