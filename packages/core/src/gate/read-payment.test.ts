import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { SettlementLedger } from '../ledger/settlement-ledger';
import type { LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import { PAYMENT_IDENTIFIER } from '../protocol/payment-identifier';
import type { PaymentPayload, PaymentRequirements } from '../protocol/schemas';
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

const signature = (payment: unknown): PaymentHeader => ({
  value: encodeHeader(payment),
  name: 'payment-signature',
});

function read(outcome: PaymentRead | Outcome): PaymentRead {
  if (outcome.kind !== 'read') throw new Error(`expected a read payment, got ${outcome.kind}`);
  return outcome;
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
      'a header that is not base64',
      () => ({ value: '%%%', name: 'payment-signature' }),
      'payment_header_invalid_base64',
    ],
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
