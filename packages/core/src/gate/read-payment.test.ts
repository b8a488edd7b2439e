import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { SettlementLedger } from '../ledger/settlement-ledger';
import type { LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import { PAYMENT_IDENTIFIER } from '../protocol/payment-identifier';
import type { PaymentPayload, PaymentRequirements } from '../protocol/schemas';
import { compileRoutes } from '../routes/compile-routes';
import { ACCEPTS, createRuntimeHarness } from '../test-support/gate-harness';
import { createScriptedFacilitator } from '../test-support/scripted-facilitator';
import { buildPayment, createSimpleScheme, TEST_PAY_TO, TEST_PAYER } from '../test-support/simple-scheme';

import type { Admitted } from './admit';
import { AuthenticatedHeaders } from './authenticated-headers';
import { parseGateOptions } from './config';
import { type PaymentHeader, type PaymentRead, readPayment } from './read-payment';
import type { GateRuntime } from './runtime';
import type { Outcome } from './types';

const BASE = 'https://api.example.com';
const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 };
const { network } = accepts;

let rt: GateRuntime;
let scheme: ReturnType<typeof createSimpleScheme>;
let store: LedgerStore;
type OnRejected = (requestId: string, code: string, message: string) => void;
let onRejected: ReturnType<typeof vi.fn<OnRejected>>;

beforeEach(() => {
  scheme = createSimpleScheme();
  store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
  onRejected = vi.fn<OnRejected>();
  const config = parseGateOptions({
    routes: {
      'GET /paid': { accepts },
      'GET /old': { accepts, x402Version: 1 },
      'GET /named': { accepts, paymentIdentifier: { required: true } },
    },
    schemes: [scheme],
    facilitator: createScriptedFacilitator(),
    ledger: store,
    baseUrl: BASE,
    instanceId: 'i1',
    hooks: { onRejected },
  });
  const ledger = new SettlementLedger({
    store,
    instanceId: 'i1',
    leaseMs: 10_000,
    retentionMs: 60_000,
    now: Date.now,
  });
  rt = { ...config, ledger, authenticated: new AuthenticatedHeaders(ledger, Date.now) };
});

function admitted(path: string, requestId = 'r-1'): Admitted {
  const match = rt.table.match('GET', `${BASE}${path}`);
  if (!match) throw new Error(`no route at ${path}`);
  const request = { method: 'GET', url: `${BASE}${path}`, header: () => undefined };
  return { kind: 'matched', match, requestId, request };
}

function requirementOf(key: string): PaymentRequirements {
  return rt.table.get(key)!.requirements[0]!;
}

const encodeText = (text: string) => Buffer.from(text, 'utf8').toString('base64');

const signature = (payment: unknown): PaymentHeader => ({
  value: encodeHeader(payment),
  name: 'payment-signature',
});

function read(outcome: PaymentRead | Outcome): PaymentRead {
  if (outcome.kind !== 'read') throw new Error(`expected a read payment, got ${outcome.kind}`);
  return outcome;
}

/** The 402 refusal's code of a v1 route, as a client reads it from the body. */
function v1RefusalCode(outcome: PaymentRead | Outcome): string {
  if (outcome.kind !== 'respond') throw new Error(`expected a refusal, got ${outcome.kind}`);
  expect(outcome.response.status).toBe(402);
  return JSON.parse(Buffer.from(outcome.response.body).toString()).error;
}

/** The 402 refusal's code, as a client reads it from PAYMENT-REQUIRED. */
function refusalCode(outcome: PaymentRead | Outcome): string {
  if (outcome.kind !== 'respond') throw new Error(`expected a refusal, got ${outcome.kind}`);
  expect(outcome.response.status).toBe(402);
  return (decodeHeaderJson(outcome.response.headers['payment-required']!) as { error: string }).error;
}

describe('readPayment', () => {
  it('reads a v2 payment: its requirement, the identity the ledger claims, the payer', async () => {
    const payment = buildPayment(requirementOf('GET /paid'));
    const { claim, paid, identifier } = read(await readPayment(rt, admitted('/paid'), signature(payment)));
    expect(claim.v2Requirement).toBe(requirementOf('GET /paid'));
    expect(claim.wirePayload).toEqual(payment);
    expect(claim.entry).toEqual({ id: paid.identity, owner: 'i1:r-1' });
    expect(claim.receiptHeader).toBe('payment-response');
    expect(claim.authenticated).toBe(true);
    expect(paid).toMatchObject({
      requestId: 'r-1',
      route: 'GET /paid',
      payer: TEST_PAYER,
      header: 'payment-signature',
    });
    expect(paid.identity).toContain(TEST_PAYER.toLowerCase());
    expect(identifier).toBeUndefined();
  });

  it('reads a v1 payment in X-PAYMENT as v1 for the facilitator and v2 for the checks', async () => {
    const v2 = buildPayment(requirementOf('GET /old'));
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: v2.payload };
    const header: PaymentHeader = { value: encodeHeader(v1), name: 'x-payment' };
    const { claim, paid } = read(await readPayment(rt, admitted('/old'), header));
    expect(claim.wirePayload).toEqual(v1);
    expect(claim.wireRequirement).toMatchObject({ network: 'base', maxAmountRequired: '1000' });
    expect(claim.v2Payload).toMatchObject({ x402Version: 2, accepted: requirementOf('GET /old') });
    expect(claim.receiptHeader).toBe('x-payment-response');
    expect(paid.x402Version).toBe(1);
  });

  it.each([
    [
      'a v1 payment on a v2 route',
      () => signature({ x402Version: 1, scheme: 'exact', network: 'base', payload: {} }),
      'payment_version_mismatch',
    ],
    [
      'another amount',
      () => signature(buildPayment(requirementOf('GET /paid'), { accepted: { amount: '1' } })),
      'payment_amount_mismatch',
    ],
    [
      'a signature the scheme refuses',
      () => signature(buildPayment(requirementOf('GET /paid'), { signature: '0xbad' })),
      'payment_signature_invalid',
    ],
    [
      'an expired authorization the ledger has never seen',
      () => signature(buildPayment(requirementOf('GET /paid'), { authorization: { validBefore: '1' } })),
      'payment_expired',
    ],
  ] as const)('refuses %s with the challenge and reports it', async (_name, header, code) => {
    const outcome = await readPayment(rt, admitted('/paid', 'r-9'), header() as PaymentHeader);
    expect(refusalCode(outcome)).toBe(code);
    expect(onRejected).toHaveBeenCalledWith('r-9', code, expect.any(String));
  });

  const withoutAccepted = (): Record<string, unknown> => {
    const { accepted: _accepted, ...rest } = buildPayment(requirementOf('GET /paid'));
    return rest;
  };
  it.each<[string, () => string, string]>([
    ['a header that is not base64', () => '!!!not-base64!!!', 'payment_header_invalid_base64'],
    ['base64 of text that is not JSON', () => encodeText('{not valid json'), 'payment_header_invalid_json'],
    ['JSON that is no PaymentPayload', () => encodeHeader({ hello: 'world' }), 'payment_payload_invalid'],
    ['a v2 payload without accepted', () => encodeHeader(withoutAccepted()), 'payment_payload_invalid'],
    ['a header longer than the cap', () => 'A'.repeat(20_000), 'payment_header_too_large'],
  ])('refuses %s with 400, the Error body and the challenge, and reports it', async (_n, value, code) => {
    for (const name of ['payment-signature', 'x-payment'] as const) {
      onRejected.mockClear();
      const outcome = await readPayment(rt, admitted('/paid', 'r-8'), { value: value(), name });
      if (outcome.kind !== 'respond') throw new Error(`expected a refusal, got ${outcome.kind}`);
      const { status, headers, body } = outcome.response;
      expect(status, name).toBe(400);
      const error = JSON.parse(Buffer.from(body).toString('utf8')).error;
      expect(error).toMatchObject({ code, request_id: 'r-8', retryable: false });
      expect(error.message).toEqual(expect.any(String));
      const challenge = decodeHeaderJson(headers['payment-required']!) as {
        error: string;
        accepts: unknown[];
      };
      expect(challenge.error).toBe(code);
      expect(challenge.accepts).toEqual([requirementOf('GET /paid')]);
      expect(headers['access-control-expose-headers']).toContain('PAYMENT-REQUIRED');
      expect(onRejected).toHaveBeenCalledWith('r-8', code, expect.any(String));
    }
  });

  it('refuses a malformed X-PAYMENT on a v1 route with 400 and the v1 challenge as the body', async () => {
    const outcome = await readPayment(rt, admitted('/old'), { value: encodeText('nope'), name: 'x-payment' });
    if (outcome.kind !== 'respond') throw new Error(`expected a refusal, got ${outcome.kind}`);
    expect(outcome.response.status).toBe(400);
    expect(outcome.response.headers['payment-required']).toBeUndefined();
    expect(JSON.parse(Buffer.from(outcome.response.body).toString('utf8'))).toMatchObject({
      x402Version: 1,
      error: 'payment_header_invalid_json',
      accepts: [{ network: 'base', maxAmountRequired: '1000' }],
    });
  });

  it('reads an expired authorization the ledger already holds (its retry is answered from there)', async () => {
    const payment = buildPayment(requirementOf('GET /paid'), { authorization: { validBefore: '1' } });
    const identity = `${network}:${requirementOf('GET /paid').asset.toLowerCase()}:${TEST_PAYER.toLowerCase()}:${(payment.payload.authorization as { nonce: string }).nonce}`;
    const entry = rt.ledger.newEntry({
      id: identity,
      owner: 'i1:earlier',
      resource: `${BASE}/paid`,
      route: 'GET /paid',
      network,
      payer: TEST_PAYER,
      payload: payment,
      requirements: requirementOf('GET /paid'),
      validBefore: 1,
    });
    await store.claim(entry);
    const { paid } = read(await readPayment(rt, admitted('/paid'), signature(payment)));
    expect(paid.identity).toBe(identity);
    expect(onRejected).not.toHaveBeenCalled();
  });

  it('reads the payment identifier of a route that speaks it, and refuses a payment without one', async () => {
    const requirement = requirementOf('GET /named');
    const named: PaymentPayload = {
      ...buildPayment(requirement),
      extensions: { [PAYMENT_IDENTIFIER]: { info: { required: true, id: 'pay_0123456789abcdef' } } },
    };
    expect(read(await readPayment(rt, admitted('/named'), signature(named))).identifier).toBe(
      'pay_0123456789abcdef',
    );
    const unnamed = await readPayment(rt, admitted('/named'), signature(buildPayment(requirement)));
    if (unnamed.kind !== 'respond') throw new Error('expected a refusal');
    expect(unnamed.response.status).toBe(400);
    expect(JSON.parse(Buffer.from(unnamed.response.body).toString('utf8')).error.code).toBe(
      'payment_identifier_invalid',
    );
    expect(decodeHeaderJson(unnamed.response.headers['payment-required']!)).toMatchObject({
      error: 'payment_identifier_invalid',
    });
  });

  it('answers a byte-identical replay of a settled payment from the ledger without checking it again', async () => {
    const header = signature(buildPayment(requirementOf('GET /paid')));
    const { claim, paid } = read(await readPayment(rt, admitted('/paid'), header));
    const entry = rt.ledger.newEntry({
      id: paid.identity,
      owner: claim.entry.owner,
      resource: `${BASE}/paid`,
      route: 'GET /paid',
      network,
      payer: paid.payer,
      payload: paid.payload,
      requirements: paid.requirements,
      validBefore: claim.validBefore,
    });
    await store.claim(entry);
    const response = { status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('paid') };
    await store.update(entry.id, { state: ['claimed'], owner: entry.owner }, { state: 'settled', response });
    const preVerify = vi.spyOn(scheme, 'preVerify');
    const replay = await readPayment(rt, admitted('/paid', 'r-2'), header);
    expect(replay).toMatchObject({ kind: 'replay', response: { status: 200 } });
    expect(preVerify).not.toHaveBeenCalled();
  });
});

// One runtime harness per test (the trap: nothing built at import).
describe('readPayment, each check', () => {
  const v1 = (payment: PaymentPayload, network = 'base') => ({
    x402Version: 1,
    scheme: 'exact',
    network,
    payload: payment.payload,
  });

  it('names both versions when the payment is of another x402 version', async () => {
    const h = createRuntimeHarness();
    const outcome = await readPayment(h.rt, h.admitted('/old'), signature(h.payment('GET /old')));
    expect(v1RefusalCode(outcome)).toBe('payment_version_mismatch');
    expect(h.recorder.of('onRejected')[0]?.[2]).toBe(
      'this route takes x402 version 1, the payment is version 2',
    );
  });

  it('says a payment for another requirement does not match the route', async () => {
    const h = createRuntimeHarness();
    const payment = h.payment('GET /paid', { accepted: { network: 'eip155:1' } });
    expect(refusalCode(await readPayment(h.rt, h.admitted('/paid'), signature(payment)))).toBe(
      'payment_network_mismatch',
    );
    expect(h.recorder.of('onRejected')[0]?.[2]).toBe('the payment does not match the route');
  });

  it.each([
    [
      'a scheme the route does not take',
      { ...v1({ payload: {} } as PaymentPayload), scheme: 'upto' },
      'payment_scheme_mismatch',
    ],
    [
      'a network the route does not take',
      v1({ payload: {} } as PaymentPayload, 'polygon'),
      'payment_network_mismatch',
    ],
  ])('refuses a v1 payment for %s', async (_what, payment, code) => {
    const h = createRuntimeHarness();
    const header: PaymentHeader = { value: encodeHeader(payment), name: 'x-payment' };
    expect(v1RefusalCode(await readPayment(h.rt, h.admitted('/old'), header))).toBe(code);
  });

  it('gives the facilitator the v1 requirement of the network a v1 payment names, among several', async () => {
    const h = createRuntimeHarness({
      routes: {
        'GET /old': {
          accepts: [ACCEPTS, { ...ACCEPTS, network: 'eip155:84532', price: '$0.002' }],
          x402Version: 1,
        },
      },
    });
    const requirement = h.rt.table.get('GET /old')!.requirements[1]!;
    const payment = v1(buildPayment(requirement), 'base-sepolia');
    const header: PaymentHeader = { value: encodeHeader(payment), name: 'x-payment' };
    const { claim } = read(await readPayment(h.rt, h.admitted('/old'), header));
    expect(claim.wireRequirement).toMatchObject({ network: 'base-sepolia', maxAmountRequired: '2000' });
    expect(claim.v2Requirement).toBe(requirement);
    expect(claim.v2Payload).toEqual({
      x402Version: 2,
      resource: { url: 'https://api.example.com/old' },
      accepted: requirement,
      payload: payment.payload,
    });
  });

  it('refuses a payment no scheme of the gate serves (a route table compiled with other schemes)', async () => {
    const table = compileRoutes(
      { 'GET /paid': { accepts: ACCEPTS } },
      { schemes: [createSimpleScheme()], baseUrl: BASE },
    );
    const h = createRuntimeHarness({ gate: { routes: table } });
    h.scheme.supportsNetwork = () => false;
    const payment = buildPayment(table.get('GET /paid')!.requirements[0]!);
    expect(refusalCode(await readPayment(h.rt, h.admitted('/paid'), signature(payment)))).toBe(
      'payment_scheme_mismatch',
    );
    expect(h.recorder.of('onRejected')[0]?.[2]).toBe('no scheme for this payment');
  });

  it('refuses with payment_invalid a payment whose check throws, with its message or a plain one', async () => {
    const h = createRuntimeHarness();
    h.scheme.preVerify = () => {
      throw new Error('unreadable signature');
    };
    expect(refusalCode(await readPayment(h.rt, h.admitted('/paid'), signature(h.payment())))).toBe(
      'payment_invalid',
    );
    h.scheme.preVerify = () => {
      throw 'odd';
    };
    await readPayment(h.rt, h.admitted('/paid'), signature(h.payment()));
    expect(h.recorder.of('onRejected').map((call) => call[2])).toEqual([
      'unreadable signature',
      'the payment could not be checked',
    ]);
  });

  it('asks the scheme with the payment, the requirement and the time in seconds', async () => {
    const h = createRuntimeHarness();
    h.clock.now = 1_800_000_000_999;
    const asked: unknown[][] = [];
    const preVerify = h.scheme.preVerify;
    h.scheme.preVerify = (...args) => {
      asked.push(args);
      return preVerify(...args);
    };
    const payment = h.payment();
    await h.read(payment);
    expect(asked).toEqual([[payment, h.requirementOf(), 1_800_000_000]]);
  });

  it('refuses an expired payment when the ledger cannot be read', async () => {
    const h = createRuntimeHarness();
    const payment = h.payment('GET /paid', { authorization: { validBefore: '1' } });
    h.store.get = async () => {
      throw new Error('down');
    };
    expect(refusalCode(await readPayment(h.rt, h.admitted('/paid'), signature(payment)))).toBe(
      'payment_expired',
    );
  });

  it('reads a known expired payment with the identity, payer and validBefore the scheme gave', async () => {
    const h = createRuntimeHarness();
    const payment = h.payment('GET /paid', { authorization: { validBefore: '1' } });
    const checked = await h.scheme.preVerify(payment, h.requirementOf(), h.clock.now / 1000);
    const pre = checked.ok ? checked : checked.known!;
    await h.store.claim({
      ...h.rt.ledger.newEntry({
        ...pre,
        id: pre.identity,
        owner: 'x:y',
        resource: `${BASE}/paid`,
        route: 'GET /paid',
        network,
        payload: payment,
        requirements: h.requirementOf(),
      }),
      validBefore: 1,
    });
    const { claim, paid } = await h.read(payment);
    expect(claim.validBefore).toBe(1);
    expect(claim.authenticated).toBe(true);
    expect(paid).toMatchObject({ identity: pre.identity, payer: TEST_PAYER });
  });

  it('keeps no shortcut for a payload the scheme could not authenticate: it is checked every time', async () => {
    const h = createRuntimeHarness();
    const payment = h.payment('GET /paid', { signature: `0xc0${'11'.repeat(80)}` });
    const first = await h.read(payment);
    expect(first.claim.authenticated).toBe(false);
    await h.store.claim({
      ...h.rt.ledger.newEntry({
        id: first.paid.identity,
        owner: 'x:y',
        resource: `${BASE}/paid`,
        route: 'GET /paid',
        network,
        payer: TEST_PAYER,
        payload: payment,
        requirements: h.requirementOf(),
        validBefore: first.claim.validBefore,
      }),
      state: 'settled',
      response: { status: 200, headers: {}, body: Buffer.from('x') },
    });
    expect((await readPayment(h.rt, h.admitted('/paid'), signature(payment))).kind).toBe('read');
  });

  it('reports a byte-identical replay to onReplay with the request', async () => {
    const h = createRuntimeHarness();
    const payment = h.payment();
    const { paid, claim } = await h.read(payment);
    await h.store.claim({
      ...h.rt.ledger.newEntry({
        id: paid.identity,
        owner: 'x:y',
        resource: `${BASE}/paid`,
        route: 'GET /paid',
        network,
        payer: TEST_PAYER,
        payload: payment,
        requirements: h.requirementOf(),
        validBefore: claim.validBefore,
      }),
      state: 'settled',
      response: { status: 200, headers: {}, body: Buffer.from('x') },
    });
    const admitted = h.admitted('/paid', 'r-2');
    expect((await readPayment(h.rt, admitted, signature(payment))).kind).toBe('replay');
    expect(h.recorder.of('onReplay')).toEqual([
      [expect.objectContaining({ id: paid.identity }), admitted.request],
    ]);
  });

  it('takes no shortcut on a route with payment identifiers: the same payload may pay for another request', async () => {
    const h = createRuntimeHarness();
    const payment = {
      ...h.payment('GET /named'),
      extensions: { [PAYMENT_IDENTIFIER]: { info: { id: 'pay_0123456789abcdef' } } },
    };
    const { paid, claim } = await h.read(payment, '/named');
    await h.store.claim({
      ...h.rt.ledger.newEntry({
        id: paid.identity,
        owner: 'x:y',
        resource: `${BASE}/named`,
        route: 'GET /named',
        network,
        payer: TEST_PAYER,
        payload: payment,
        requirements: h.requirementOf('GET /named'),
        validBefore: claim.validBefore,
      }),
      state: 'settled',
      response: { status: 200, headers: {}, body: Buffer.from('x') },
    });
    const again = await readPayment(h.rt, h.admitted('/named?other=1'), signature(payment));
    expect(again.kind).toBe('read');
  });

  it('answers 400 with the reason for a malformed identifier, and reads none where it is optional', async () => {
    const h = createRuntimeHarness();
    const malformed = {
      ...h.payment('GET /named'),
      extensions: { [PAYMENT_IDENTIFIER]: { info: { id: 'short' } } },
    };
    const outcome = await readPayment(h.rt, h.admitted('/named'), signature(malformed));
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(outcome.response.status).toBe(400);
    const error = JSON.parse(Buffer.from(outcome.response.body).toString()).error;
    expect(error.code).toBe('payment_identifier_invalid');
    expect(error.message).toEqual(expect.stringContaining('id'));
    expect((await h.read(h.payment('GET /named'), '/named')).identifier).toBeUndefined();
  });

  it('names where a required identifier goes', async () => {
    const outcome = await readPayment(
      rt,
      admitted('/named'),
      signature(buildPayment(requirementOf('GET /named'))),
    );
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(JSON.parse(Buffer.from(outcome.response.body).toString()).error.message).toBe(
      'this route requires a payment identifier in extensions["payment-identifier"].info.id',
    );
  });
});
