import { beforeEach, describe, expect, it } from 'vitest';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import type { LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import {
  createScriptedFacilitator,
  type ScriptedFacilitator,
  TEST_TX,
} from '../test-support/scripted-facilitator';
import { buildPayment, createSimpleScheme, TEST_PAY_TO, TEST_PAYER } from '../test-support/simple-scheme';
import { createPaymentGate, type TollboothGate } from './create-payment-gate';
import type { HandlerResponse, Outcome } from './types';

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
    for (const again of [await outcome.settle(handled), await gate.finish(outcome.payment, handled)]) {
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
    expect(receiptOf(await gate.finish(retry.payment, handled))).toEqual(settledReceipt);
    expect(facilitator.calls.settle).toBe(1);
  });
});
