import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../ledger/types';
import type { PaymentPayload, PaymentRequirements } from '../protocol/schemas';
import type { ReconcileInput, ReconcileResult, SchemeServer } from '../scheme';
import { TEST_TX } from '../test-support/scripted-facilitator';
import { buildPayment, createSimpleScheme, TEST_ASSET, TEST_PAY_TO } from '../test-support/simple-scheme';
import { askChain, type ChainQuestion, questionFor } from './ask-chain';

const requirements: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '1000',
  asset: TEST_ASSET,
  payTo: TEST_PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { name: 'USD Coin', version: '2' },
};
const VALID_BEFORE = 1_800_000_000;

/** A question to a scheme whose chain reader answers `answer` and keeps what it was asked. */
function question(answer: ReconcileResult | (() => never), transaction?: string) {
  const asked: ReconcileInput[] = [];
  const scheme: SchemeServer = {
    ...createSimpleScheme(),
    async reconcile(input) {
      asked.push(input);
      return typeof answer === 'function' ? answer() : answer;
    },
  };
  const q: ChainQuestion = {
    scheme,
    payload: buildPayment(requirements),
    requirements,
    validBefore: VALID_BEFORE,
    ...(transaction ? { transaction } : {}),
  };
  return { q, asked };
}

describe('askChain', () => {
  it('asks the chain reader with the payload, the requirements, the known transaction and the time in seconds', async () => {
    const settled: ReconcileResult = {
      status: 'settled',
      receipt: { success: true, transaction: TEST_TX, network: 'eip155:8453' },
    };
    const { q, asked } = question(settled, TEST_TX);
    expect(await askChain(q, 1_700_000_000_999)).toEqual(settled);
    expect(asked).toEqual([{ payload: q.payload, requirements, transaction: TEST_TX, now: 1_700_000_000 }]);
  });

  it('asks without a transaction when none is known', async () => {
    const { q, asked } = question({ status: 'unsettled' });
    await askChain(q, 1_700_000_000_000);
    expect(asked[0]).not.toHaveProperty('transaction');
  });

  it('answers unknown, naming the scheme and network, for a scheme without a chain reader', async () => {
    const { q } = question({ status: 'unsettled' });
    const { reconcile: _none, ...withoutReader } = q.scheme;
    expect(await askChain({ ...q, scheme: withoutReader }, 0)).toEqual({
      status: 'unknown',
      message: 'the exact scheme has no chain reader for eip155:8453',
    });
  });

  it('answers unknown with the message of a chain reader that fails, never "not paid"', async () => {
    const { q } = question(() => {
      throw new Error('rpc timeout');
    });
    expect(await askChain(q, 0)).toEqual({ status: 'unknown', message: 'rpc timeout' });
    const odd = question(() => {
      throw 'odd';
    });
    expect(await askChain(odd.q, 0)).toEqual({ status: 'unknown', message: 'reconcile failed' });
  });

  it("leaves expiry to the chain's time: an authorization the reader shows unused stays unsettled past validBefore on the server's clock", async () => {
    const { q } = question({ status: 'unsettled' });
    expect(await askChain(q, (VALID_BEFORE - 1) * 1000)).toEqual({ status: 'unsettled' });
    expect(await askChain(q, (VALID_BEFORE + 3_600) * 1000)).toEqual({ status: 'unsettled' });
    const expired = question({ status: 'expired' });
    expect(await askChain(expired.q, (VALID_BEFORE - 1) * 1000)).toEqual({ status: 'expired' });
  });

  it('passes an unknown answer through after validBefore (the chain may still show it)', async () => {
    const { q } = question({ status: 'unknown', message: 'pending' });
    expect(await askChain(q, (VALID_BEFORE + 100) * 1000)).toEqual({ status: 'unknown', message: 'pending' });
  });
});

describe('questionFor', () => {
  const scheme = createSimpleScheme();
  const payment = buildPayment(requirements);
  const entry = (overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
    id: 'id-1',
    state: 'uncertain',
    resource: 'https://api.example.com/paid',
    route: 'GET /paid',
    network: 'eip155:8453',
    payer: '0x1',
    payload: payment,
    requirements,
    validBefore: VALID_BEFORE,
    owner: 'alpha:r',
    leaseUntil: 0,
    createdAt: 0,
    updatedAt: 0,
    expiresAt: 0,
    ...overrides,
  });

  it('asks about a v2 entry with its stored payload and requirements, and its transaction', () => {
    expect(questionFor(entry({ transaction: TEST_TX }), [scheme])).toEqual({
      scheme,
      payload: payment,
      requirements,
      validBefore: VALID_BEFORE,
      transaction: TEST_TX,
    });
    expect(questionFor(entry(), [scheme])).not.toHaveProperty('transaction');
  });

  it('asks about a v1 entry in v2 form: CAIP-2 network, amount, and the payload under the resource', () => {
    const v1Requirements = {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '1000',
      asset: TEST_ASSET,
      payTo: TEST_PAY_TO,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin' },
      resource: 'https://api.example.com/paid',
    };
    const v1Payload = { x402Version: 1, scheme: 'exact', network: 'base', payload: payment.payload };
    const asked = questionFor(entry({ payload: v1Payload, requirements: v1Requirements }), [scheme]);
    const v2: PaymentRequirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '1000',
      asset: TEST_ASSET,
      payTo: TEST_PAY_TO,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin' },
    };
    expect(asked?.requirements).toEqual(v2);
    expect(asked?.payload).toEqual({
      x402Version: 2,
      resource: { url: 'https://api.example.com/paid' },
      accepted: v2,
      payload: payment.payload,
    } satisfies PaymentPayload);
  });

  it('fills what a v1 requirement leaves out, and keeps a network name it does not know', () => {
    const asked = questionFor(
      entry({
        payload: { x402Version: 1, payload: payment.payload },
        requirements: { scheme: 'exact', network: 'eip155:10', maxAmountRequired: '5' },
      }),
      [scheme],
    );
    expect(asked?.requirements).toEqual({
      scheme: 'exact',
      network: 'eip155:10',
      amount: '5',
      asset: '',
      payTo: '',
      maxTimeoutSeconds: 0,
      extra: {},
    });
  });

  it.each([
    ['no requirements', { requirements: undefined }],
    ['null requirements', { requirements: null }],
    ['a null payload', { payload: null }],
    ['requirements that are a string', { requirements: 'exact' }],
    ['requirements without a scheme', { requirements: { ...requirements, scheme: 1 } }],
    ['requirements without a network', { requirements: { ...requirements, network: undefined } }],
    ['requirements with neither amount', { requirements: { scheme: 'exact', network: 'base' } }],
    ['requirements no scheme serves', { requirements: { ...requirements, network: 'solana:mainnet' } }],
    ['another scheme', { requirements: { ...requirements, scheme: 'upto' } }],
    ['no payload', { payload: undefined }],
    ['a payload that is a string', { payload: 'x' }],
    ['a payload without its inner payload', { payload: { x402Version: 2 } }],
    ['a payload whose inner payload is null', { payload: { x402Version: 2, payload: null } }],
    ['a payload whose inner payload is a string', { payload: { x402Version: 2, payload: 'x' } }],
  ])('asks nothing about an entry with %s', (_what, overrides) => {
    expect(questionFor(entry(overrides as Partial<LedgerEntry>), [scheme])).toBeUndefined();
  });
});
