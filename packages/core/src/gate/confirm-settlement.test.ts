// The chain, not the facilitator's word, decides that a payment was settled: with a scheme that
// can confirm (a chain reader), a reported success whose transaction did not transfer the payment
// is uncertain (502), and the retried payload is settled again once the chain shows it unused.
import { beforeEach, describe, expect, it } from 'vitest';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { encodeHeader } from '../protocol/codec';
import type { PaymentPayload } from '../protocol/schemas';
import type { ReconcileInput, ReconcileResult } from '../scheme';
import {
  createScriptedFacilitator,
  type ScriptedFacilitator,
  TEST_TX,
} from '../test-support/scripted-facilitator';
import {
  buildPayment,
  createSimpleScheme,
  type SimpleScheme,
  TEST_PAY_TO,
} from '../test-support/simple-scheme';
import { createPaymentGate, type TollboothGate } from './create-payment-gate';

const BASE = 'https://api.example.com';
const network = 'eip155:8453';

let facilitator: ScriptedFacilitator;
let scheme: SimpleScheme & {
  confirmSettlement(input: ReconcileInput & { transaction: string }): Promise<ReconcileResult>;
};
let confirmations: string[];
let chain: 'shows' | 'unused' | 'pending';
let gate: TollboothGate;

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  confirmations = [];
  chain = 'shows';
  scheme = Object.assign(createSimpleScheme(), {
    async confirmSettlement(input: ReconcileInput & { transaction: string }): Promise<ReconcileResult> {
      confirmations.push(input.transaction);
      if (chain === 'pending') return { status: 'unknown', message: 'the transaction is still pending' };
      if (chain === 'unused') return { status: 'unsettled' };
      return { status: 'settled', receipt: { success: true, transaction: input.transaction, network } };
    },
  });
  scheme.reconcileAnswer = { status: 'unsettled' };
  gate = createPaymentGate({
    routes: {
      'GET /paid': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 } },
    },
    schemes: [scheme],
    facilitator,
    ledger: createMemoryLedgerStore({ purgeIntervalMs: 0 }),
    baseUrl: BASE,
  });
});

async function send(payment: PaymentPayload) {
  const value = encodeHeader(payment);
  const outcome = await gate.handle({
    method: 'GET',
    url: `${BASE}/paid`,
    header: (name) => (name.toLowerCase() === 'payment-signature' ? value : undefined),
  });
  if (outcome.kind === 'pass') throw new Error('the paid route passed');
  if (outcome.kind !== 'proceed') return outcome.response;
  return outcome.settle({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"ok":true}'),
  });
}

const payment = () => buildPayment(gate.routes.get('GET /paid')!.requirements[0]!);

describe('a settlement the facilitator reports as successful', () => {
  it('is served once the chain shows its transfer', async () => {
    const response = await send(payment());
    expect(response.status).toBe(200);
    expect(confirmations).toEqual([TEST_TX]);
  });

  it('stays uncertain (502, no paid answer) when the chain does not show it, and settles again on the retry', async () => {
    chain = 'unused';
    const paid = payment();
    const first = await send(paid);
    expect(first.status).toBe(502);
    expect(JSON.parse(Buffer.from(first.body).toString('utf8')).error.code).toBe('settlement_uncertain');
    expect(first.headers['payment-response']).toBeUndefined();

    chain = 'shows';
    const retry = await send(paid);
    expect(retry.status).toBe(200);
    expect(facilitator.calls.settle).toBe(2);
  });

  it('stays uncertain while its transaction is pending', async () => {
    chain = 'pending';
    expect((await send(payment())).status).toBe(502);
  });
});
