// The gate's money boundaries through its public entry point only (so reshaping the gate's
// files leaves this test alone): a paid path hidden behind encoded dot segments is still paid,
// a payment header exactly as long as the cap is read while one character more is refused, and a
// settled payment's stored answer is never served for another resource.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createMemoryLedgerStore,
  createPaymentGate,
  DEFAULT_MAX_PAYMENT_HEADER_BYTES,
  decodeHeaderJson,
  encodeHeader,
  type GateResponse,
  type PaymentPayload,
  type RequestView,
  type TollboothGate,
} from '../index';
import {
  createScriptedFacilitator,
  type ScriptedFacilitator,
  TEST_TX,
} from '../test-support/scripted-facilitator';
import { buildPayment, createSimpleScheme, TEST_PAY_TO, TEST_PAYER } from '../test-support/simple-scheme';

const BASE = 'https://api.example.com';
const network = 'eip155:8453';

let facilitator: ScriptedFacilitator;

function gateWith(maxPaymentHeaderBytes?: number): TollboothGate {
  return createPaymentGate({
    routes: {
      'GET /api/v1/fees/now': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' } },
      // Same price and recipient: a payment for one is a well-formed payment for the other.
      'GET /api/v1/fees/other': { accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' } },
    },
    schemes: [createSimpleScheme()],
    facilitator,
    ledger: createMemoryLedgerStore({ purgeIntervalMs: 0 }),
    baseUrl: BASE,
    reconcileIntervalMs: 0,
    ...(maxPaymentHeaderBytes === undefined ? {} : { maxPaymentHeaderBytes }),
  });
}

function view(path: string, headers: Record<string, string> = {}): RequestView {
  return { method: 'GET', url: `${BASE}${path}`, header: (name) => headers[name.toLowerCase()] };
}

/** The gate's answer to a request, with the handler answering 200 when the gate lets it run. */
async function answer(gate: TollboothGate, request: RequestView): Promise<GateResponse | 'passed'> {
  const outcome = await gate.handle(request);
  if (outcome.kind === 'pass') return 'passed';
  if (outcome.kind === 'respond' || outcome.kind === 'replay') return outcome.response;
  return outcome.settle({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"ok":true}'),
  });
}

const errorOf = (response: GateResponse) =>
  (decodeHeaderJson(response.headers['payment-required']!) as { error?: string }).error;

/** A valid payment for the paid route whose header is exactly `length` characters long. */
function headerOfLength(gate: TollboothGate, length: number): string {
  const requirements = gate.routes.get('GET /api/v1/fees/now')!.requirements[0]!;
  const payment: PaymentPayload = buildPayment(requirements);
  // Grow an extension until the JSON is as long as `length` base64 characters hold with no padding.
  const bytes = (length / 4) * 3;
  const bare = Buffer.byteLength(JSON.stringify({ ...payment, extensions: { pad: '' } }));
  const value = encodeHeader({ ...payment, extensions: { pad: 'x'.repeat(bytes - bare) } });
  expect(value).toHaveLength(length);
  return value;
}

beforeEach(() => {
  facilitator = createScriptedFacilitator();
});

describe('the gate on encoded dot segments', () => {
  it.each([
    '/api/v1/free/%2e%2e/fees/now',
    '/api/v1/free/%2E%2E/fees/now',
    '/api/v1/free/%252e%252e/fees/now',
    '/api/v1/fees/%2e/now',
  ])('refuses %s as the paid route, never passing it', async (path) => {
    const gate = gateWith();
    expect(gate.isPaid('GET', path)).toBe(true);
    const response = await answer(gate, view(path));
    expect(response).not.toBe('passed');
    const { status, headers, body } = response as GateResponse;
    // Either the paid route's challenge, or (where the gate requires the exact path of a paid
    // route) a refusal of the target before any payment; never the handler.
    if (status === 400) {
      expect(JSON.parse(Buffer.from(body).toString('utf8'))).toMatchObject({
        error: { code: 'invalid_request_target' },
      });
    } else {
      expect(status).toBe(402);
      expect(decodeHeaderJson(headers['payment-required']!)).toMatchObject({
        resource: { url: `${BASE}/api/v1/fees/now` },
      });
    }
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
  });
});

describe('the payment header size cap', () => {
  it.each([
    ['the default cap', undefined, DEFAULT_MAX_PAYMENT_HEADER_BYTES],
    ['a configured cap', 8_192, 8_192],
  ])('accepts a header exactly as long as %s and settles it', async (_what, cap, length) => {
    const gate = gateWith(cap);
    const value = headerOfLength(gate, length);
    const response = (await answer(
      gate,
      view('/api/v1/fees/now', { 'payment-signature': value }),
    )) as GateResponse;
    expect(response.status).toBe(200);
    expect(decodeHeaderJson(response.headers['payment-response']!)).toEqual({
      success: true,
      transaction: TEST_TX,
      network,
      payer: TEST_PAYER,
    });
    expect(facilitator.calls).toEqual({ verify: 1, settle: 1 });
  });

  it.each([
    ['the default cap', undefined, DEFAULT_MAX_PAYMENT_HEADER_BYTES],
    ['a configured cap', 8_192, 8_192],
  ])(
    'refuses a header one character longer than %s before any facilitator call',
    async (_what, cap, length) => {
      const gate = gateWith(cap);
      // One character more than the cap: the size is judged before the base64 (which this is not).
      const value = `${headerOfLength(gate, length)}A`;
      const response = (await answer(
        gate,
        view('/api/v1/fees/now', { 'payment-signature': value }),
      )) as GateResponse;
      expect(response.status).toBe(400);
      expect(errorOf(response)).toBe('payment_header_too_large');
      expect(JSON.parse(Buffer.from(response.body).toString('utf8')).error.code).toBe(
        'payment_header_too_large',
      );
      expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
    },
  );
});

describe('a settled payment sent to another resource', () => {
  it('is refused payment_already_used whether its answer is read from the ledger or kept in process', async () => {
    const gate = gateWith();
    const requirements = gate.routes.get('GET /api/v1/fees/now')!.requirements[0]!;
    const header = encodeHeader(buildPayment(requirements));
    const paid = (await answer(
      gate,
      view('/api/v1/fees/now', { 'payment-signature': header }),
    )) as GateResponse;
    expect(paid.status).toBe(200);
    const other = () => answer(gate, view('/api/v1/fees/other', { 'payment-signature': header }));
    // The same header text, read from the ledger: another resource is refused.
    const fromLedger = (await other()) as GateResponse;
    expect(fromLedger.status).toBe(402);
    expect(errorOf(fromLedger)).toBe('payment_already_used');
    // A replay for its own resource keeps the answer beside the header text; still refused elsewhere.
    const replay = await gate.handle(view('/api/v1/fees/now', { 'payment-signature': header }));
    expect(replay.kind).toBe('replay');
    const again = await gate.handle(view('/api/v1/fees/now', { 'payment-signature': header }));
    expect(again.kind).toBe('replay');
    const fromKept = (await other()) as GateResponse;
    expect(fromKept.status).toBe(402);
    expect(errorOf(fromKept)).toBe('payment_already_used');
    expect(facilitator.calls.settle).toBe(1);
  });
});
