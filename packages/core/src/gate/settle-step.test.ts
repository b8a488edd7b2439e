// Settling with the facilitator and recording the outcome (settle-step.ts, docs/ledger.md): the
// handler's answer stored before the facilitator is asked, a refusal recorded with its receipt, an
// unknown outcome left uncertain and free, and the chain, not the facilitator's word, confirming.
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../ledger/types';
import type { SettleResponse } from '../protocol/schemas';
import type { ReconcileInput, ReconcileResult } from '../scheme';
import {
  codeOf,
  createGateHarness,
  type GateHarness,
  NETWORK,
  receiptOf,
} from '../test-support/gate-harness';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { TEST_PAYER } from '../test-support/simple-scheme';

const OTHER_TX = `0x${'8'.repeat(64)}`;

/** A facilitator whose settle answers `receipt` (or throws it), after noting the entry it found. */
function settleAnswers(h: GateHarness, answer: SettleResponse | { throws: unknown }) {
  const seen: LedgerEntry[] = [];
  h.facilitator.settle = async () => {
    seen.push(...(await h.store.query({})));
    if ('throws' in answer) throw answer.throws;
    return answer;
  };
  return seen;
}

/** Gives the scheme a chain reader that confirms (or not) a reported settlement. */
function confirming(h: GateHarness, answer: ReconcileResult | Error) {
  const asked: Array<ReconcileInput & { transaction: string }> = [];
  Object.assign(h.scheme, {
    async confirmSettlement(input: ReconcileInput & { transaction: string }) {
      asked.push(input);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
  return asked;
}

const failed = (overrides: Partial<SettleResponse> = {}): SettleResponse => ({
  success: false,
  errorReason: 'invalid_exact_evm_insufficient_balance',
  errorMessage: 'balance 0',
  transaction: '',
  network: NETWORK,
  payer: TEST_PAYER,
  ...overrides,
});

describe('settling after the handler', () => {
  it("stores the handler's answer in the settling entry before the facilitator is asked", async () => {
    const h = createGateHarness();
    const seen = settleAnswers(h, {
      success: true,
      transaction: TEST_TX,
      network: NETWORK,
      payer: TEST_PAYER,
    });
    const { response } = await h.run(h.pay(h.payment()));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.state).toBe('settling');
    expect(Buffer.from(seen[0]!.response!.body).toString()).toBe(Buffer.from(response!.body).toString());
    const entry = await h.onlyEntry();
    expect(entry).toMatchObject({ state: 'settled', transaction: TEST_TX });
    expect(receiptOf(entry.response!)).toEqual({
      success: true,
      transaction: TEST_TX,
      network: NETWORK,
      payer: TEST_PAYER,
    });
    expect(h.recorder.of('onTransfer')).toEqual([
      [
        expect.objectContaining({
          id: entry.id,
          route: 'GET /paid',
          network: NETWORK,
          payer: TEST_PAYER,
          transaction: TEST_TX,
          via: 'request',
        }),
      ],
    ]);
  });

  it('records no transaction for a receipt without one', async () => {
    const h = createGateHarness();
    settleAnswers(h, { success: true, transaction: '', network: NETWORK });
    expect((await h.run(h.pay(h.payment()))).response?.status).toBe(200);
    expect(await h.onlyEntry()).not.toHaveProperty('transaction');
  });

  it('answers 409 and settles nothing when the entry changed before it could be marked settling', async () => {
    const h = createGateHarness();
    const update = h.store.update.bind(h.store);
    h.store.update = async (id, expected, patch) =>
      patch.state === 'settling' ? undefined : update(id, expected, patch);
    const { response } = await h.run(h.pay(h.payment()));
    expect(response?.status).toBe(409);
    expect(codeOf(response)).toBe('payment_in_progress');
    expect(h.facilitator.calls.settle).toBe(0);
  });
});

describe('a settlement the facilitator refuses', () => {
  it('answers the challenge with the failed receipt, records it rejected with its message, reports its reason, when the chain shows nothing moved', async () => {
    const h = createGateHarness();
    const receipt = failed();
    settleAnswers(h, receipt);
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    const { response } = await h.run(h.pay(h.payment()));
    expect(response?.status).toBe(402);
    expect(codeOf(response)).toBe('payment_insufficient_funds');
    expect(receiptOf(response!)).toEqual(receipt);
    const entry = await h.onlyEntry();
    expect(entry).toMatchObject({
      state: 'rejected',
      receipt,
      error: { code: 'payment_insufficient_funds', message: 'balance 0' },
    });
    expect(entry.response?.status).toBe(402);
    expect(h.recorder.of('onRejected')).toEqual([
      [
        response!.headers['x-request-id'],
        'payment_insufficient_funds',
        'invalid_exact_evm_insufficient_balance',
      ],
    ]);
    expect(h.scheme.reconcileCalls).toBe(1);
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: {
        requestId: response!.headers['x-request-id'],
        id: entry.id,
        reason: 'invalid_exact_evm_insufficient_balance',
        code: 'payment_insufficient_funds',
        chain: 'unsettled',
      },
      message: 'settlement refused',
    });
  });

  it('records the reason as message, and settlement_failed as reason, when the facilitator gives neither (no chain reader)', async () => {
    const h = createGateHarness();
    h.scheme.hasChainReader = () => false;
    settleAnswers(h, failed({ errorMessage: undefined, errorReason: 'odd_refusal' }));
    await h.run(h.pay(h.payment()));
    expect((await h.onlyEntry()).error).toEqual({
      code: 'payment_settlement_failed',
      message: 'odd_refusal',
    });
    const other = createGateHarness();
    delete other.scheme.reconcile;
    settleAnswers(other, failed({ errorMessage: undefined, errorReason: undefined }));
    const { response } = await other.run(other.pay(other.payment()));
    expect(codeOf(response)).toBe('payment_settlement_failed');
    expect((await other.onlyEntry()).error).toEqual({
      code: 'payment_settlement_failed',
      message: 'settlement_failed',
    });
    expect(other.recorder.of('onRejected')[0]?.slice(1)).toEqual([
      'payment_settlement_failed',
      'settlement_failed',
    ]);
    // Without a chain reader for the network, the facilitator's word stands: nothing to ask.
    expect(h.scheme.reconcileCalls + other.scheme.reconcileCalls).toBe(0);
  });
});

describe('a refusal the chain judges (a chain reader for the network)', () => {
  const onChain = {
    success: true,
    transaction: OTHER_TX,
    network: NETWORK,
    payer: TEST_PAYER,
    amount: '1000',
  };

  it.each([
    ['unexpected_settle_error', ''],
    ['invalid_exact_evm_transaction_failed', ''],
    ['invalid_exact_evm_insufficient_balance', ''],
    ['invalid_exact_evm_transfer_event_mismatch', TEST_TX],
  ])(
    'serves on the chain receipt, charged once, when the facilitator answers %s after its transfer landed',
    async (reason, transaction) => {
      const h = createGateHarness();
      settleAnswers(h, failed({ errorReason: reason, transaction }));
      const asked: Array<string | undefined> = [];
      h.scheme.reconcileAnswer = (input) => {
        asked.push(input.transaction);
        return { status: 'settled', receipt: onChain };
      };
      const payment = h.payment();
      const { response } = await h.run(h.pay(payment));
      expect(response?.status).toBe(200);
      expect(receiptOf(response!)).toEqual(onChain);
      expect(asked).toEqual([transaction || undefined]);
      const entry = await h.onlyEntry();
      expect(entry).toMatchObject({ state: 'settled', transaction: OTHER_TX, receipt: onChain });
      expect(entry.resolution).toBeUndefined();
      expect(h.facilitator.calls.settle).toBe(0);
      expect(h.recorder.of('onRejected')).toEqual([]);
      expect(h.recorder.of('onTransfer')).toEqual([
        [expect.objectContaining({ id: entry.id, transaction: OTHER_TX, via: 'request' })],
      ]);
      expect(h.logger.lines).toContainEqual({
        level: 'warn',
        fields: { requestId: expect.any(String), id: entry.id, reason, transaction: OTHER_TX },
        message: 'facilitator refused a settlement the chain shows: served on the chain receipt',
      });
      // The retry of the exact payload gets the same answer, byte for byte.
      const retry = await h.gate.handle(h.pay(payment));
      expect(retry.kind).toBe('replay');
      expect(Buffer.from((retry as { response: { body: Uint8Array } }).response.body)).toEqual(
        Buffer.from(response!.body),
      );
    },
  );

  it('keeps it uncertain (502, retryable) when the chain cannot tell', async () => {
    const h = createGateHarness();
    settleAnswers(h, failed({ errorReason: 'unexpected_settle_error', errorMessage: 'boom' }));
    h.scheme.reconcileAnswer = { status: 'unknown', message: 'rpc down' };
    const { response } = await h.run(h.pay(h.payment()));
    expect(response?.status).toBe(502);
    expect(codeOf(response)).toBe('settlement_uncertain');
    expect(await h.onlyEntry()).toMatchObject({
      state: 'uncertain',
      leaseUntil: 0,
      error: {
        code: 'settlement_uncertain',
        message:
          'the facilitator refused the settlement (unexpected_settle_error: boom) and the chain cannot tell yet: rpc down',
      },
    });
    expect(h.recorder.of('onRejected')).toEqual([]);
    expect(h.logger.messages('warn')).toContain(
      'facilitator refused a settlement the chain cannot rule out: kept uncertain',
    );
  });

  it.each([
    'unexpected_settle_error',
    'invalid_exact_evm_transaction_failed',
    'invalid_exact_evm_nonce_already_used',
    undefined,
  ])(
    'keeps it uncertain when the refusal (%s) names no transaction and the chain shows none yet: one it broadcast may still land',
    async (reason) => {
      const h = createGateHarness();
      settleAnswers(h, failed({ errorReason: reason, errorMessage: undefined }));
      h.scheme.reconcileAnswer = { status: 'unsettled' };
      const { response } = await h.run(h.pay(h.payment()));
      expect(response?.status).toBe(502);
      expect(await h.onlyEntry()).toMatchObject({
        state: 'uncertain',
        error: {
          code: 'settlement_uncertain',
          message: `the facilitator refused the settlement (${reason ?? 'settlement_failed'}) without naming a transaction; the chain shows no transfer yet, and one it broadcast may still land`,
        },
      });
    },
  );

  it('records the refusal when it names its transaction and the chain shows that transaction did not use the authorization', async () => {
    const h = createGateHarness();
    settleAnswers(h, failed({ errorReason: 'invalid_exact_evm_transaction_failed', transaction: TEST_TX }));
    const asked: Array<string | undefined> = [];
    h.scheme.reconcileAnswer = (input) => {
      asked.push(input.transaction);
      return { status: 'unsettled' };
    };
    const { response } = await h.run(h.pay(h.payment()));
    expect(response?.status).toBe(402);
    expect(codeOf(response)).toBe('payment_settlement_failed');
    expect(asked).toEqual([TEST_TX]);
    expect(await h.onlyEntry()).toMatchObject({ state: 'rejected' });
  });

  it('records the refusal when the chain says the authorization expired unused', async () => {
    const h = createGateHarness();
    settleAnswers(h, failed({ errorReason: 'unexpected_settle_error' }));
    h.scheme.reconcileAnswer = { status: 'expired' };
    const { response } = await h.run(h.pay(h.payment()));
    expect(response?.status).toBe(402);
    expect(await h.onlyEntry()).toMatchObject({
      state: 'rejected',
      error: { code: 'payment_settlement_failed', message: 'balance 0' },
    });
    expect(h.logger.lines.find((l) => l.message === 'settlement refused')?.fields).toMatchObject({
      chain: 'expired',
    });
  });

  it('runs the handler of a route that settles first on the chain receipt', async () => {
    const h = createGateHarness();
    settleAnswers(h, failed({ errorReason: 'unexpected_settle_error' }));
    h.scheme.reconcileAnswer = { status: 'settled', receipt: onChain };
    const { response, handlerRuns } = await h.run(h.pay(h.payment('GET /first'), '/first'));
    expect(response?.status).toBe(200);
    expect(handlerRuns).toBe(1);
    expect(receiptOf(response!)).toEqual(onChain);
    expect(await h.onlyEntry()).toMatchObject({ state: 'settled', transaction: OTHER_TX });
  });
});

describe('a settlement whose outcome is unknown', () => {
  it('is recorded uncertain with the error, free at once, and logged, when the facilitator throws', async () => {
    const h = createGateHarness();
    const error = new Error('socket hang up');
    settleAnswers(h, { throws: error });
    const { response } = await h.run(h.pay(h.payment()));
    expect(response?.status).toBe(502);
    expect(codeOf(response)).toBe('settlement_uncertain');
    expect(await h.onlyEntry()).toMatchObject({
      state: 'uncertain',
      leaseUntil: 0,
      error: { code: 'settlement_uncertain', message: 'socket hang up' },
    });
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: { err: error, requestId: response!.headers['x-request-id'] },
      message: 'facilitator settle outcome unknown',
    });
  });

  it('says "settlement outcome unknown" for a facilitator that throws no Error, and needs no logger', async () => {
    const h = createGateHarness({ gate: { logger: undefined } });
    settleAnswers(h, { throws: 'odd' });
    expect((await h.run(h.pay(h.payment()))).response?.status).toBe(502);
    expect((await h.onlyEntry()).error).toEqual({
      code: 'settlement_uncertain',
      message: 'settlement outcome unknown',
    });
  });

  it('keeps the transaction of a pending settlement, and its message', async () => {
    const h = createGateHarness();
    settleAnswers(
      h,
      failed({ errorReason: 'settlement_pending', errorMessage: 'in the mempool', transaction: TEST_TX }),
    );
    expect((await h.run(h.pay(h.payment()))).response?.status).toBe(502);
    expect(await h.onlyEntry()).toMatchObject({
      state: 'uncertain',
      transaction: TEST_TX,
      error: { code: 'settlement_uncertain', message: 'in the mempool' },
    });
  });

  it('says "settlement pending" and records no transaction for a pending settlement without them', async () => {
    const h = createGateHarness();
    settleAnswers(h, failed({ errorReason: 'settlement_pending', errorMessage: undefined, transaction: '' }));
    await h.run(h.pay(h.payment()));
    const entry = await h.onlyEntry();
    expect(entry.error).toEqual({ code: 'settlement_uncertain', message: 'settlement pending' });
    expect(entry).not.toHaveProperty('transaction');
    expect(h.recorder.of('onRejected')).toEqual([]);
  });
});

describe('the chain confirming a reported settlement', () => {
  it('is asked with the payment, the reported transaction and the time in seconds; its transaction is recorded', async () => {
    const h = createGateHarness();
    h.clock.now = 1_800_000_000_500;
    const asked = confirming(h, {
      status: 'settled',
      receipt: { success: true, transaction: OTHER_TX, network: NETWORK },
    });
    const payment = h.payment();
    const { response } = await h.run(h.pay(payment));
    expect(asked).toEqual([
      { payload: payment, requirements: h.requirementOf(), transaction: TEST_TX, now: 1_800_000_000 },
    ]);
    expect(receiptOf(response!)).toEqual({
      success: true,
      transaction: OTHER_TX,
      network: NETWORK,
      payer: TEST_PAYER,
    });
    expect((await h.onlyEntry()).transaction).toBe(OTHER_TX);
  });

  it.each([
    [
      'not yet confirmed',
      { status: 'unknown', message: 'pending' } as const,
      `the facilitator reported settlement in ${TEST_TX}, not yet confirmed on chain: pending`,
    ],
    [
      'not shown on chain',
      { status: 'unsettled' } as const,
      `the facilitator reported settlement in ${TEST_TX}, which the chain does not show`,
    ],
    [
      'unreadable',
      new Error('rpc down'),
      `the facilitator reported settlement in ${TEST_TX}, which could not be confirmed on chain`,
    ],
  ])(
    'keeps a settlement %s uncertain (502), with the transaction and why',
    async (_what, answer, message) => {
      const h = createGateHarness();
      confirming(h, answer);
      const { response } = await h.run(h.pay(h.payment()));
      expect(response?.status).toBe(502);
      expect(response?.headers['payment-response']).toBeUndefined();
      expect(await h.onlyEntry()).toMatchObject({
        state: 'uncertain',
        transaction: TEST_TX,
        error: { code: 'settlement_uncertain', message },
      });
      expect(h.recorder.of('onTransfer')).toEqual([]);
    },
  );

  it('logs a chain reader that failed to confirm', async () => {
    const h = createGateHarness();
    const error = new Error('rpc down');
    confirming(h, error);
    const { response } = await h.run(h.pay(h.payment()));
    expect(h.logger.lines).toContainEqual({
      level: 'warn',
      fields: { err: error, requestId: response!.headers['x-request-id'] },
      message: 'confirming a settlement on chain failed',
    });
  });

  it('records no transaction for a settlement the chain could not confirm that had none', async () => {
    const h = createGateHarness();
    confirming(h, { status: 'unsettled' });
    settleAnswers(h, { success: true, transaction: '', network: NETWORK });
    await h.run(h.pay(h.payment()));
    expect(await h.onlyEntry()).not.toHaveProperty('transaction');
  });
});

describe('settling an uncertain payment again (a retry)', () => {
  async function uncertain(h: GateHarness) {
    h.facilitator.settleScript = 'timeout';
    const payment = h.payment();
    expect((await h.run(h.pay(payment))).response?.status).toBe(502);
    h.facilitator.settleScript = 'success';
    h.scheme.reconcileAnswer = { status: 'unsettled' };
    return payment;
  }

  it('records the resolution and reports the transfer as a retry', async () => {
    const h = createGateHarness();
    const payment = await uncertain(h);
    h.clock.advance(1_000);
    const { response } = await h.run(h.pay(payment));
    expect(response?.status).toBe(200);
    const entry = await h.onlyEntry();
    const resolution = {
      by: 'retry',
      instance: 'alpha',
      at: h.clock.now,
      from: 'uncertain',
      action: 'settled-again',
      attempts: 0,
      note: `transfer ${TEST_TX}`,
    };
    expect(entry).toMatchObject({ state: 'settled', transaction: TEST_TX, resolution });
    expect(h.recorder.of('onTransfer').map(([event]) => (event as { via: string }).via)).toEqual(['retry']);
    expect(h.recorder.of('onResolved')).toEqual([
      [{ id: entry.id, route: 'GET /paid', network: NETWORK, payer: TEST_PAYER }, resolution],
    ]);
  });

  it('records a refusal of the re-settle as the payer reads it when the chain shows the payment unused', async () => {
    const h = createGateHarness();
    const payment = await uncertain(h);
    settleAnswers(h, failed({ errorMessage: undefined }));
    const { response } = await h.run(h.pay(payment));
    expect(codeOf(response)).toBe('payment_insufficient_funds');
    expect((await h.onlyEntry()).error).toEqual({
      code: 'payment_insufficient_funds',
      message: 'invalid_exact_evm_insufficient_balance',
    });
  });

  it("keeps it uncertain with the facilitator's message when the chain cannot tell after a refused re-settle", async () => {
    const h = createGateHarness();
    const payment = await uncertain(h);
    let asked = 0;
    h.scheme.reconcileAnswer = () =>
      asked++ === 0 ? { status: 'unsettled' } : { status: 'unknown', message: 'rpc' };
    settleAnswers(
      h,
      failed({ errorReason: 'invalid_exact_evm_nonce_already_used', errorMessage: 'nonce used' }),
    );
    expect((await h.run(h.pay(payment))).response?.status).toBe(502);
    expect((await h.onlyEntry()).error).toEqual({
      code: 'settlement_uncertain',
      message:
        'the facilitator refused the settlement (invalid_exact_evm_nonce_already_used: nonce used) and the chain cannot tell yet: rpc',
    });
    settleAnswers(
      h,
      failed({ errorReason: 'invalid_exact_evm_nonce_already_used', errorMessage: undefined }),
    );
    asked = 0;
    await h.run(h.pay(payment));
    expect((await h.onlyEntry()).error).toEqual({
      code: 'settlement_uncertain',
      message:
        'the facilitator refused the settlement (invalid_exact_evm_nonce_already_used) and the chain cannot tell yet: rpc',
    });
  });

  it('asks the chain only once for a pending re-settle', async () => {
    const h = createGateHarness();
    const payment = await uncertain(h);
    settleAnswers(h, failed({ errorReason: 'settlement_pending', transaction: TEST_TX }));
    expect((await h.run(h.pay(payment))).response?.status).toBe(502);
    expect(h.scheme.reconcileCalls).toBe(1);
  });
});
