// createPaymentGate's own wiring (create-payment-gate.ts): the steps in order, the hooks each
// reports, the fail-closed answer to an unexpected failure, the proceed outcome's settle / release,
// isPaid / close, and what it hands the ledger and the reconciler.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXPOSED_PAYMENT_HEADERS } from '../http/paid-response';
import { codeOf, createGateHarness, handlerResponse, NETWORK } from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';

afterEach(() => {
  vi.useRealTimers();
});

describe('handle', () => {
  it('reports onMatched for a request at a paid route, with the request, route and resource', async () => {
    const h = createGateHarness();
    const view = h.view('/paid', { 'x-request-id': 'r-1' });
    await h.gate.handle(view);
    await h.gate.handle(h.view('/free'));
    expect(h.recorder.of('onMatched')).toEqual([
      [
        {
          requestId: 'r-1',
          request: view,
          route: h.gate.routes.get('GET /paid'),
          resource: 'https://api.example.com/paid',
        },
      ],
    ]);
    expect(h.recorder.of('onChallenge')).toEqual([
      [
        {
          requestId: 'r-1',
          request: view,
          route: h.gate.routes.get('GET /paid'),
          resource: 'https://api.example.com/paid',
        },
      ],
    ]);
    expect(h.recorder.of('onFailed')).toEqual([]);
  });

  it('reports a refused target to onFailed with its status and code', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.view('/paid#x', { 'x-request-id': 'r-2' }));
    expect(outcome.kind).toBe('respond');
    expect(h.recorder.of('onFailed')).toEqual([
      [expect.objectContaining({ requestId: 'r-2', status: 400, code: 'invalid_request_target' })],
    ]);
    expect(h.recorder.of('onChallenge')).toEqual([]);
  });

  it("sends a precondition's own answer without reporting it, and reports one that threw", async () => {
    const answer = { status: 404, headers: {}, body: Buffer.from('none') };
    const h = createGateHarness({
      routes: {
        'GET /own': {
          accepts: { network: NETWORK, payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', price: '$0.001' },
          precondition: () => answer,
        },
        'GET /throws': {
          accepts: { network: NETWORK, payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', price: '$0.001' },
          precondition: () => {
            throw new Error('db down');
          },
        },
      },
    });
    expect(await h.gate.handle(h.view('/own'))).toEqual({ kind: 'respond', response: answer });
    expect(h.recorder.of('onFailed')).toEqual([]);
    const thrown = await h.gate.handle(h.view('/throws'));
    expect(thrown.kind === 'respond' && codeOf(thrown.response)).toBe('internal_error');
    expect(h.recorder.of('onFailed')).toEqual([
      [expect.objectContaining({ status: 503, code: 'internal_error' })],
    ]);
    expect(h.recorder.of('onChallenge')).toEqual([]);
  });

  it('answers a browser the paywall page with the challenge header, and a machine client the JSON challenge', async () => {
    const h = createGateHarness({ gate: { paywall: true } });
    const page = await h.gate.handle(h.view('/paid', { accept: 'text/html' }));
    if (page.kind !== 'respond') throw new Error('expected an answer');
    expect(page.response.status).toBe(402);
    expect(page.response.headers['content-type']).toContain('text/html');
    expect(page.response.headers['payment-required']).toBeDefined();
    const json = await h.gate.handle(h.view('/paid', { accept: 'application/json' }));
    expect(json.kind === 'respond' && json.response.headers['content-type']).toBe('application/json');
  });

  it('answers the JSON challenge to a browser without the paywall', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.view('/paid', { accept: 'text/html' }));
    expect(outcome.kind === 'respond' && outcome.response.headers['content-type']).toBe('application/json');
  });

  it('reports a payment let through to onVerified, with the payment', async () => {
    const h = createGateHarness();
    const view = h.pay(h.payment());
    const outcome = await h.gate.handle(view);
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    expect(h.recorder.of('onVerified')).toEqual([
      [
        expect.objectContaining({
          requestId: outcome.payment.requestId,
          request: view,
          payment: outcome.payment,
        }),
      ],
    ]);
  });

  it('answers 503 internal_error, logged, to an unexpected failure while paying (fail closed)', async () => {
    const h = createGateHarness();
    const broken = new Error('store exploded');
    h.store.update = async () => {
      throw broken;
    };
    const outcome = await h.gate.handle(h.pay(h.payment(), '/paid'));
    if (outcome.kind !== 'respond') throw new Error('expected an answer');
    expect(outcome.response.status).toBe(503);
    expect(JSON.parse(Buffer.from(outcome.response.body).toString()).error).toMatchObject({
      code: 'internal_error',
      message: 'the payment could not be processed',
    });
    expect(h.logger.lines).toContainEqual({
      level: 'error',
      fields: { err: broken, requestId: outcome.response.headers['x-request-id'] },
      message: 'payment gate failed',
    });
    expect(h.recorder.of('onFailed')).toEqual([
      [expect.objectContaining({ status: 503, code: 'internal_error' })],
    ]);
    const quiet = createGateHarness({ gate: { logger: undefined } });
    quiet.store.update = async () => {
      throw broken;
    };
    const answer = await quiet.gate.handle(quiet.pay(quiet.payment()));
    expect(answer.kind === 'respond' && codeOf(answer.response)).toBe('internal_error');
  });
});

describe('finish and release', () => {
  it('pass the answer of a payment the gate does not hold through, exposing the payment headers', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.release();
    const answer = await outcome.settle(handlerResponse(200, 'as is'));
    expect(answer.headers).toEqual({
      'content-type': 'application/json',
      'access-control-expose-headers': EXPOSED_PAYMENT_HEADERS,
    });
    await expect(outcome.release()).resolves.toBeUndefined();
    expect(h.facilitator.calls.settle).toBe(0);
    expect(await h.store.get(outcome.payment.identity)).toBeUndefined();
  });

  it('settle the payment once: a second finish passes the answer through', async () => {
    const h = createGateHarness();
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.settle(handlerResponse());
    expect((await outcome.settle(handlerResponse())).headers['payment-response']).toBeUndefined();
    expect(h.facilitator.calls.settle).toBe(1);
  });

  it('release the payment once: a release after it leaves a new claim of the same payment alone', async () => {
    const h = createGateHarness();
    const payment = h.payment();
    const outcome = await h.gate.handle(h.pay(payment));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    await outcome.release();
    const again = await h.gate.handle(h.pay(payment));
    expect(again.kind).toBe('proceed');
    await outcome.release();
    expect((await h.onlyEntry()).state).toBe('verified');
  });
});

describe('isPaid', () => {
  it.each([
    ['get', '/paid', true],
    ['options', '/paid', false],
    ['POST', '/paid', true],
    ['GET', '/free', false],
  ] as const)('tells %s %s', (method, path, paid) => {
    expect(createGateHarness().gate.isPaid(method, path)).toBe(paid);
  });

  it('lets other methods at a paid path through with otherMethods pass', () => {
    const h = createGateHarness({ gate: { otherMethods: 'pass' } });
    expect(h.gate.isPaid('POST', '/paid')).toBe(false);
    expect(h.gate.isPaid('GET', '/paid')).toBe(true);
  });
});

describe('the ledger and the reconciler of a gate', () => {
  it('exposes the store and the route table it was given', () => {
    const h = createGateHarness();
    expect(h.gate.ledger).toBe(h.store);
    expect(h.gate.routes.get('GET /paid')?.key).toBe('GET /paid');
  });

  it("reports the reconciler's transfers and resolutions to the gate's hooks", async () => {
    const h = createGateHarness();
    h.facilitator.settleScript = 'timeout';
    await h.run(h.pay(h.payment()));
    h.scheme.reconcileAnswer = {
      status: 'settled',
      receipt: { success: true, transaction: TEST_TX, network: NETWORK },
    };
    expect(await h.gate.reconciler.runOnce()).toMatchObject({ confirmed: 1 });
    expect(h.recorder.of('onTransfer')).toEqual([
      [expect.objectContaining({ via: 'reconciler', transaction: TEST_TX })],
    ]);
    expect(h.recorder.of('onResolved')).toEqual([
      [
        expect.objectContaining({ route: 'GET /paid' }),
        expect.objectContaining({ by: 'reconciler', instance: 'alpha' }),
      ],
    ]);
    expect(h.logger.messages('warn')).toContain('ledger reconciler resolved an entry');
  });

  it('runs the reconciler every reconcileIntervalMs until closed', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const h = createGateHarness({ gate: { reconcileIntervalMs: 500 } });
    await vi.advanceTimersByTimeAsync(500);
    expect(h.gate.reconciler.stats().rounds).toBe(1);
    await h.gate.close();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(h.gate.reconciler.stats().rounds).toBe(1);
  });

  it('stops renewing leases once closed, and logs a renewal the store refused', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const h = createGateHarness({ gate: { leaseMs: 30 } });
    const outcome = await h.gate.handle(h.pay(h.payment()));
    if (outcome.kind !== 'proceed') throw new Error('expected proceed');
    const down = new Error('renewal failed');
    h.store.update = async () => {
      throw down;
    };
    await vi.advanceTimersByTimeAsync(10);
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: { err: down, id: outcome.payment.identity },
      message: 'ledger lease renewal failed',
    });
    const renewals = h.logger.lines.length;
    await h.gate.close();
    await vi.advanceTimersByTimeAsync(100);
    expect(h.logger.lines).toHaveLength(renewals);
  });
});
