import { beforeEach, describe, expect, it } from 'vitest';
import type { GateResponse, RequestView } from '../http/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import type { LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import { PAYMENT_IDENTIFIER_JSON_SCHEMA, readPaymentIdentifier } from '../protocol/payment-identifier';
import type { PaymentPayload } from '../protocol/schemas';
import { compileRoutes } from '../routes/compile-routes';
import type { RoutesConfig } from '../routes/types';
import { createScriptedFacilitator, type ScriptedFacilitator } from '../test-support/scripted-facilitator';
import { buildPayment, createQuietChainScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { createPaymentGate, type TollboothGate } from './create-payment-gate';
import { canonicalQuery, requestFingerprint } from './request-fingerprint';

const BASE = 'https://api.example.com';
const network = 'eip155:8453';
const accepts = { network, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 };
const routes: RoutesConfig = {
  'GET /report': { accepts, paymentIdentifier: true },
  'POST /order': { accepts, paymentIdentifier: true },
  'GET /strict': { accepts, paymentIdentifier: { required: true } },
  'GET /plain': { accepts },
};
const ID = 'pay_7d5d747be160e280504c099d984bcfe0';

let facilitator: ScriptedFacilitator;
let store: LedgerStore;
let gate: TollboothGate;
let runs: number;

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
  gate = newGate(store);
  runs = 0;
});

function newGate(ledger: LedgerStore): TollboothGate {
  return createPaymentGate({
    routes,
    schemes: [createQuietChainScheme()],
    facilitator,
    ledger,
    baseUrl: BASE,
    inFlightWaitMs: 300,
    pollIntervalMs: 20,
    reconcileIntervalMs: 0,
  });
}

/** A newly signed payment for a route, carrying `id` the way the official client adds it. */
function payment(key: string, id: string | null = ID, extra: Record<string, unknown> = {}): PaymentPayload {
  const base = buildPayment(gate.routes.get(key)!.requirements[0]!);
  const challenge = decodeHeaderJson(gate.routes.get(key)!.challenge(`${BASE}/x`).header!) as {
    extensions?: Record<string, { info: Record<string, unknown> }>;
  };
  const declared = challenge.extensions?.['payment-identifier'];
  if (id === null || !declared) return base;
  return {
    ...base,
    extensions: { 'payment-identifier': { ...declared, info: { ...declared.info, id, ...extra } } },
  };
}

function request(path: string, pay: PaymentPayload | undefined, method = 'GET', body = ''): RequestView {
  const headers: Record<string, string> = pay ? { 'payment-signature': encodeHeader(pay) } : {};
  return {
    method,
    url: `${BASE}${path}`,
    header: (name) => headers[name.toLowerCase()],
    body: async () => Buffer.from(body),
  };
}

/** Runs a request through the gate and a handler that answers a fresh body each time it runs. */
async function send(view: RequestView): Promise<GateResponse> {
  const outcome = await gate.handle(view);
  if (outcome.kind === 'respond' || outcome.kind === 'replay') return outcome.response;
  if (outcome.kind === 'pass') throw new Error('not a paid route');
  runs += 1;
  return outcome.settle({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ run: runs, at: Math.random() })),
  });
}

const codeOf = (response: GateResponse) =>
  (JSON.parse(Buffer.from(response.body).toString()) as { error: { code: string } }).error.code;

describe('payment-identifier: the challenge', () => {
  it('advertises the extension with required and its JSON schema when the route enables it', () => {
    const header = decodeHeaderJson(gate.routes.get('GET /report')!.challenge(`${BASE}/report`).header!) as {
      extensions: Record<string, unknown>;
    };
    expect(header.extensions['payment-identifier']).toEqual({
      info: { required: false },
      schema: PAYMENT_IDENTIFIER_JSON_SCHEMA,
    });
    const strict = decodeHeaderJson(gate.routes.get('GET /strict')!.challenge(`${BASE}/strict`).header!) as {
      extensions: Record<string, { info: unknown }>;
    };
    expect(strict.extensions['payment-identifier']!.info).toEqual({ required: true });
    expect(gate.routes.get('GET /plain')!.challenge(`${BASE}/plain`).object['extensions']).toBeUndefined();
  });

  it('refuses the option on an x402 v1 route and a hand-written declaration, at configuration time', () => {
    expect(() =>
      compileRoutes(
        {
          'GET /a': { accepts, x402Version: 1, paymentIdentifier: true },
          'GET /b': { accepts, paymentIdentifier: true, extensions: { 'payment-identifier': {} } },
          'GET /c': { accepts, paymentIdentifier: 'yes' as never },
        },
        { schemes: [createQuietChainScheme()], baseUrl: BASE },
      ),
    ).toThrow(/GET \/a.*x402 v2[\s\S]*GET \/b.*paymentIdentifier option[\s\S]*GET \/c.*true, false/);
  });
});

describe('payment-identifier: reading and fingerprinting', () => {
  it.each([
    ['too short', 'pay_short'],
    ['too long', `p${'x'.repeat(128)}`],
    ['a forbidden character', 'pay_7d5d747be160e280!'],
    ['not a string', 1234567890123456],
  ])('finds an identifier %s malformed', (_label, id) => {
    expect(readPaymentIdentifier({ 'payment-identifier': { info: { id } } }).kind).toBe('malformed');
  });

  it('reads a valid identifier, and no identifier as absent', () => {
    expect(readPaymentIdentifier({ 'payment-identifier': { info: { required: false, id: ID } } })).toEqual({
      kind: 'present',
      id: ID,
    });
    expect(readPaymentIdentifier({ 'payment-identifier': { info: { required: false } } }).kind).toBe(
      'absent',
    );
    expect(readPaymentIdentifier(undefined).kind).toBe('absent');
    expect(readPaymentIdentifier({ 'payment-identifier': 'x' }).kind).toBe('malformed');
  });

  it('gives one fingerprint to reordered query parameters and another to a changed body or method', () => {
    const base = { method: 'POST', resourceUrl: `${BASE}/order`, query: 'b=2&a=1', body: Buffer.from('{}') };
    expect(canonicalQuery('b=2&a=1&a=0')).toBe('a=1&a=0&b=2');
    expect(requestFingerprint(base)).toBe(requestFingerprint({ ...base, query: 'a=1&b=2' }));
    expect(requestFingerprint(base)).not.toBe(requestFingerprint({ ...base, body: Buffer.from('{ }') }));
    expect(requestFingerprint(base)).not.toBe(requestFingerprint({ ...base, method: 'PUT' }));
    expect(requestFingerprint(base)).not.toBe(requestFingerprint({ ...base, query: 'a=1&b=3' }));
  });
});

describe('payment-identifier: the gate', () => {
  it('answers the same identifier and request with the stored bytes, never settling the new payload', async () => {
    const first = await send(request('/report?x=1', payment('GET /report')));
    expect(first.status).toBe(200);
    expect(facilitator.calls).toEqual({ verify: 1, settle: 1 });
    const again = await send(request('/report?x=1', payment('GET /report')));
    expect(again.status).toBe(200);
    expect(Buffer.compare(Buffer.from(again.body), Buffer.from(first.body))).toBe(0);
    expect(again.headers).toEqual(first.headers);
    expect(facilitator.calls).toEqual({ verify: 1, settle: 1 });
    expect(runs).toBe(1);
  });

  it('answers 409 payment_identifier_conflict for the same identifier on another query, body or path', async () => {
    expect((await send(request('/order', payment('POST /order'), 'POST', '{"n":1}'))).status).toBe(200);
    const otherBody = await send(request('/order', payment('POST /order'), 'POST', '{"n":2}'));
    expect(otherBody.status).toBe(409);
    expect(codeOf(otherBody)).toBe('payment_identifier_conflict');
    const otherQuery = await send(request('/order?n=2', payment('POST /order'), 'POST', '{"n":1}'));
    expect(codeOf(otherQuery)).toBe('payment_identifier_conflict');
    const otherPath = await send(request('/report', payment('GET /report')));
    expect(codeOf(otherPath)).toBe('payment_identifier_conflict');
    // The first payload itself, sent for another request, is a conflict too (not a replay).
    expect(facilitator.calls).toEqual({ verify: 1, settle: 1 });
    expect(runs).toBe(1);
  });

  it('refuses a malformed identifier, or a missing one where required, with 400 before any claim', async () => {
    const bad = await send(request('/report', payment('GET /report', 'short')));
    expect(bad.status).toBe(400);
    expect(codeOf(bad)).toBe('payment_identifier_invalid');
    const missing = await send(request('/strict', payment('GET /strict', null)));
    expect(missing.status).toBe(400);
    expect(codeOf(missing)).toBe('payment_identifier_invalid');
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
    expect(await store.query({})).toEqual([]);
  });

  it('frees an identifier whose first payment charged nothing', async () => {
    facilitator.settleScript = 'failure';
    const refused = await send(request('/report', payment('GET /report')));
    expect(refused.status).toBe(402);
    facilitator.settleScript = 'success';
    const paid = await send(request('/report?other=1', payment('GET /report')));
    expect(paid.status).toBe(200);
    expect(facilitator.calls.settle).toBe(2);
  });

  it('keeps identifiers apart per payer and ignores them on a route that does not speak the extension', async () => {
    expect((await send(request('/plain', payment('GET /report')))).status).toBe(200);
    expect((await send(request('/plain', payment('GET /report')))).status).toBe(200);
    expect(facilitator.calls.settle).toBe(2);
  });

  it('lets a second gate on the same store answer from the first one’s payment', async () => {
    const first = await send(request('/report', payment('GET /report')));
    const other = newGate(store);
    const outcome = await other.handle(request('/report', payment('GET /report')));
    expect(outcome.kind).toBe('replay');
    expect(
      Buffer.compare(
        Buffer.from((outcome as { response: GateResponse }).response.body),
        Buffer.from(first.body),
      ),
    ).toBe(0);
    const conflict = await other.handle(request('/report?y', payment('GET /report')));
    expect(conflict.kind === 'respond' && conflict.response.status).toBe(409);
    await other.close();
    expect(facilitator.calls.settle).toBe(1);
  });

  it('answers concurrent payments under one identifier with one settlement and one handler run', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => send(request('/report', payment('GET /report')))),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    for (const answer of answers)
      expect(Buffer.compare(Buffer.from(answer.body), Buffer.from(answers[0]!.body))).toBe(0);
    expect(facilitator.calls.settle).toBe(1);
    expect(runs).toBe(1);
  });
});
