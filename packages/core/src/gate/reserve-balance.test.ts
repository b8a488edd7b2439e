// Issue 32, part 3: one balance never pays for two handlers of a `reserveBalance` route. Verified
// but unsettled payments of one payer in one asset are held against the balance the chain reader
// reports, through the ledger store, on one gate and on two sharing a store.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createMemoryLedgerStore,
  createPaymentGate,
  decodeHeaderJson,
  encodeHeader,
  type GateResponse,
  type LedgerStore,
  type RequestView,
  type RoutesConfig,
  type TollboothGate,
} from '../index';
import { createScriptedFacilitator, type ScriptedFacilitator } from '../test-support/scripted-facilitator';
import {
  buildPayment,
  createQuietChainScheme,
  createSimpleScheme,
  TEST_PAY_TO,
} from '../test-support/simple-scheme';

const BASE = 'https://api.example.com';
const network = 'eip155:8453';
/** $0.001 in 6-decimal atomic units. */
const PRICE = 1000n;

let facilitator: ScriptedFacilitator;
/** The payer's balance as the chain reader reports it; `undefined` makes the read fail. */
let balance: bigint | undefined;
let balanceReads: number;

function schemeWithBalance() {
  // A chain that shows every authorization unused: a refused settlement is refused.
  const scheme = createQuietChainScheme();
  scheme.balanceOf = async () => {
    balanceReads++;
    if (balance === undefined) throw new Error('RPC down');
    return balance;
  };
  return scheme;
}

function gateOn(store: LedgerStore, routes: Partial<RoutesConfig[string]> = {}, reads = true): TollboothGate {
  return createPaymentGate({
    routes: {
      'POST /api/v1/tx/broadcast': {
        accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' },
        reserveBalance: true,
        ...routes,
      },
    },
    schemes: [reads ? schemeWithBalance() : createSimpleScheme()],
    facilitator,
    ledger: store,
    baseUrl: BASE,
    reconcileIntervalMs: 0,
  });
}

function paymentHeader(gate: TollboothGate): string {
  const requirements = gate.routes.get('POST /api/v1/tx/broadcast')!.requirements[0]!;
  return encodeHeader(buildPayment(requirements));
}

const view = (header: string): RequestView => ({
  method: 'POST',
  url: `${BASE}/api/v1/tx/broadcast`,
  header: (name) => (name.toLowerCase() === 'payment-signature' ? header : undefined),
});

const errorOf = (response: GateResponse) =>
  (decodeHeaderJson(response.headers['payment-required']!) as { error?: string }).error;

/** Sends `k` distinct payments at once; the handler (counted) answers `status` to each it runs for. */
async function burst(gates: TollboothGate[], k: number, status = 200) {
  let handlerRuns = 0;
  const answers = await Promise.all(
    Array.from({ length: k }, async (_, i) => {
      const gate = gates[i % gates.length]!;
      const outcome = await gate.handle(view(paymentHeader(gate)));
      if (outcome.kind !== 'proceed') return (outcome as { response: GateResponse }).response;
      handlerRuns++;
      return outcome.settle({ status, headers: {}, body: Buffer.from('{}') });
    }),
  );
  return { handlerRuns, answers };
}

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  balance = PRICE;
  balanceReads = 0;
});

describe('reserveBalance routes', () => {
  it('run one handler for ten concurrent payments from a balance that pays for one; the rest 402 payment_balance_reserved', async () => {
    const gate = gateOn(createMemoryLedgerStore({ purgeIntervalMs: 0 }));
    const { handlerRuns, answers } = await burst([gate], 10);
    expect(handlerRuns).toBe(1);
    expect(facilitator.calls.settle).toBe(1);
    const refused = answers.filter((a) => a.status === 402);
    expect(refused).toHaveLength(9);
    for (const answer of refused) expect(errorOf(answer)).toBe('payment_balance_reserved');
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
  });

  it('let as many handlers run as the balance pays for, across two gates sharing a store', async () => {
    balance = 3n * PRICE;
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const { handlerRuns } = await burst([gateOn(store), gateOn(store)], 10);
    expect(handlerRuns).toBe(3);
    expect(facilitator.calls.settle).toBe(3);
  });

  it('give the balance back when a payment settles, fails its handler or is refused at settle', async () => {
    const gate = gateOn(createMemoryLedgerStore({ purgeIntervalMs: 0 }));
    // The handler failed: nothing charged, the reservation given back, the next payment runs.
    expect((await burst([gate], 1, 502)).handlerRuns).toBe(1);
    expect((await burst([gate], 1)).handlerRuns).toBe(1);
    // Settled: the reservation is given back (the chain's balance shows the transfer now).
    balance = PRICE;
    expect((await burst([gate], 1)).handlerRuns).toBe(1);
    facilitator.settleScript = 'failure';
    expect((await burst([gate], 1)).answers[0]!.status).toBe(402);
    facilitator.settleScript = 'success';
    expect((await burst([gate], 1)).handlerRuns).toBe(1);
  });

  it('keep the reservation of an uncertain settlement: the balance may still pay it', async () => {
    balance = PRICE;
    const gate = gateOn(createMemoryLedgerStore({ purgeIntervalMs: 0 }));
    facilitator.settleScript = 'timeout';
    expect((await burst([gate], 1)).answers[0]!.status).toBe(502);
    facilitator.settleScript = 'success';
    const { handlerRuns, answers } = await burst([gate], 1);
    expect(handlerRuns).toBe(0);
    expect(errorOf(answers[0]!)).toBe('payment_balance_reserved');
  });

  it('answer 503 chain_unavailable without running the handler when the balance cannot be read, and free the payment', async () => {
    const gate = gateOn(createMemoryLedgerStore({ purgeIntervalMs: 0 }));
    balance = undefined;
    const header = paymentHeader(gate);
    const refused = await gate.handle(view(header));
    expect(refused.kind).toBe('respond');
    const body = JSON.parse(Buffer.from((refused as { response: GateResponse }).response.body).toString());
    expect(body.error.code).toBe('chain_unavailable');
    balance = PRICE;
    // The same payload again: the claim and the reservation were given back.
    expect((await gate.handle(view(header))).kind).toBe('proceed');
  });

  it('read no balance on a route without the option, and run unreserved without a balance reader (warned at start)', async () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    expect((await burst([gateOn(store, { reserveBalance: false })], 4)).handlerRuns).toBe(4);
    expect(balanceReads).toBe(0);
    const warnings: string[] = [];
    const gate = createPaymentGate({
      routes: {
        'POST /api/v1/tx/broadcast': {
          accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' },
          reserveBalance: true,
        },
      },
      schemes: [createSimpleScheme()],
      facilitator,
      ledger: store,
      baseUrl: BASE,
      reconcileIntervalMs: 0,
      logger: {
        warn: (_o: unknown, message: string) => warnings.push(message),
        error: () => {},
        info: () => {},
      },
    });
    expect(warnings.some((w) => w.includes('reserveBalance') && w.includes('unreserved'))).toBe(true);
    expect((await burst([gate], 3)).handlerRuns).toBe(3);
  });

  it('are refused at start with a store that cannot reserve, or on a route that settles first', () => {
    const {
      reserveBalance: _r,
      releaseReservation: _l,
      ...bare
    } = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    expect(() => gateOn(bare as LedgerStore)).toThrow(/reserveBalance\/releaseReservation/);
    expect(() =>
      gateOn(createMemoryLedgerStore({ purgeIntervalMs: 0 }), { settle: 'before-handler' }),
    ).toThrow(/reserveBalance is for a route that settles after its handler/);
    expect(() =>
      gateOn(createMemoryLedgerStore({ purgeIntervalMs: 0 }), {
        reserveBalance: 'yes' as unknown as boolean,
      }),
    ).toThrow(/reserveBalance must be a boolean/);
  });
});
