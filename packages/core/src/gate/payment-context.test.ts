// What every step shares (payment-context.ts): ledger writes that fail quietly but are logged,
// and how a retry's resolutions and transfers are reported.
import { describe, expect, it } from 'vitest';
import { codeOf, createGateHarness, handlerResponse, NETWORK } from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { TEST_PAYER } from '../test-support/simple-scheme';

describe('a ledger write after the facilitator answered', () => {
  it('is logged when the entry changed under the request, and no transfer is reported for it', async () => {
    const h = createGateHarness();
    const update = h.store.update.bind(h.store);
    h.store.update = async (id, expected, patch) =>
      patch.state === 'settled' ? undefined : update(id, expected, patch);
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    expect((await outcome.settle(handlerResponse())).status).toBe(200);
    expect(h.logger.lines).toContainEqual({
      level: 'error',
      fields: { requestId: outcome.payment.requestId, state: 'settled' },
      message: 'ledger entry changed under us',
    });
    expect(h.recorder.of('onTransfer')).toEqual([]);
  });

  it('is logged with its error when the store fails', async () => {
    const h = createGateHarness();
    const down = new Error('write failed');
    const update = h.store.update.bind(h.store);
    h.store.update = async (id, expected, patch) => {
      if (patch.state === 'rejected') throw down;
      return update(id, expected, patch);
    };
    h.facilitator.settleScript = 'failure';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const { response } = await h.run(h.pay(h.payment()));
    expect(codeOf(response)).toBe('payment_insufficient_funds');
    expect(h.logger.lines).toContainEqual({
      level: 'error',
      fields: { err: down, requestId: response!.headers['x-request-id'], state: 'rejected' },
      message: 'ledger update failed',
    });
  });

  it('reports no transfer when the settled write failed', async () => {
    const h = createGateHarness();
    const update = h.store.update.bind(h.store);
    h.store.update = async (id, expected, patch) => {
      if (patch.state === 'settled') throw new Error('write failed');
      return update(id, expected, patch);
    };
    expect((await h.run(h.pay(h.payment()))).response?.status).toBe(200);
    expect(h.logger.messages('error')).toEqual(['ledger update failed']);
    expect(h.recorder.of('onTransfer')).toEqual([]);
  });

  it('fails quietly without a logger too', async () => {
    const h = createGateHarness({ gate: { logger: undefined } });
    const update = h.store.update.bind(h.store);
    h.store.update = async (id, expected, patch) => {
      if (patch.state === 'rejected') throw new Error('x');
      return patch.state === 'uncertain' ? undefined : update(id, expected, patch);
    };
    h.facilitator.settleScript = 'failure';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    expect(codeOf((await h.run(h.pay(h.payment()))).response)).toBe('payment_insufficient_funds');
    h.facilitator.settleScript = 'timeout';
    expect(codeOf((await h.run(h.pay(h.payment()))).response)).toBe('settlement_uncertain');
  });
});

describe('giving back a claim that spent nothing', () => {
  it('logs a release the store refused, and still answers', async () => {
    const h = createGateHarness();
    const down = new Error('remove failed');
    h.store.remove = async () => {
      throw down;
    };
    h.facilitator.verifyScript = 'invalid';
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'respond') throw new Error('expected an answer');
    expect(codeOf(outcome.response)).toBe('payment_signature_invalid');
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: { err: down, requestId: outcome.response.headers['x-request-id'] },
      message: 'ledger release failed',
    });
  });

  it('ends the flight even when the release failed: the retry is not kept waiting', async () => {
    const h = createGateHarness({ gate: { logger: undefined } });
    const remove = h.store.remove.bind(h.store);
    let fail = true;
    h.store.remove = async (id, expected) => {
      if (fail) throw new Error('x');
      return remove(id, expected);
    };
    h.facilitator.verifyScript = 'timeout';
    const payment = h.payment();
    expect(codeOf((await h.run(h.pay(payment))).response)).toBe('facilitator_unavailable');
    fail = false;
    h.facilitator.verifyScript = 'valid';
    // The claim stayed (its removal failed), held by this instance's request: the retry waits
    // for it in the store, not in process, and it runs out only with its lease.
    h.clock.advance(10_001);
    expect((await h.run(h.pay(payment))).handlerRuns).toBe(1);
  });
});

describe('a resolution made by a retry', () => {
  it('is reported to onResolved and logged, counting the attempts the reconciler made before', async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'timeout';
    const payment = h.payment();
    await h.run(h.pay(payment));
    h.facilitator.settleScript = 'success';
    h.scheme.reconcileAnswer = { status: 'unknown', message: 'later' };
    await h.gate.reconciler.runOnce();
    h.clock.advance(5_000);
    await h.gate.reconciler.runOnce();
    const entry = await h.onlyEntry();
    expect(entry.resolution).toMatchObject({ by: 'reconciler', attempts: 2 });
    h.scheme.reconcileAnswer = {
      status: 'settled',
      receipt: { success: true, transaction: TEST_TX, network: NETWORK, payer: TEST_PAYER },
    };
    const view = h.pay(payment);
    const outcome = await h.gate.handle(view);
    expect(outcome.kind).toBe('replay');
    const resolution = {
      by: 'retry',
      instance: 'alpha',
      at: h.clock.now,
      from: 'uncertain',
      action: 'confirmed-on-chain',
      attempts: 2,
      note: `transfer ${TEST_TX}`,
    };
    expect(h.recorder.of('onResolved').at(-1)).toEqual([
      { id: entry.id, route: 'GET /paid', network: NETWORK, payer: TEST_PAYER },
      resolution,
    ]);
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: {
        requestId: expect.any(String),
        id: entry.id,
        action: 'confirmed-on-chain',
        from: 'uncertain',
        note: `transfer ${TEST_TX}`,
      },
      message: 'a retry resolved an uncertain payment',
    });
    expect(h.recorder.of('onTransfer').at(-1)).toEqual([
      {
        id: entry.id,
        route: 'GET /paid',
        network: NETWORK,
        payer: TEST_PAYER,
        transaction: TEST_TX,
        via: 'retry',
        request: view,
      },
    ]);
  });
});
