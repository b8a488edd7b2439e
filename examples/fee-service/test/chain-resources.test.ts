// The chain-data resources (next block, fee landscape, broadcast) and the x402 demo on a real
// service: the official x402 client pays each and gets a body valid against the schema the
// service publishes; every failure (bad input, unknown input, upstream down, node rejection) is
// answered without settling, checked on the devnet by the payer's balance.
import { decodeHeaderJson } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { buildRawTx, faucetSpend, paymentScript } from './fixtures/raw-tx';
import { assertErrorBody } from './support/contract-schemas';
import {
  balanceOf,
  challengeOf,
  FRAMEWORKS,
  type JsonBody,
  removeScratch,
  signPayment,
  startTestService,
} from './support/harness';

let devnet: Devnet;
let calm: MempoolSimulator;
let down: MempoolSimulator;
let service: RunningFeeService;
let mempoolOnly: RunningFeeService;
let upstreamDown: RunningFeeService;

beforeAll(async () => {
  [devnet, calm, down] = await Promise.all([
    startDevnet({ payers: 4 }),
    startMempoolSimulator({ scenario: 'calm', seed: 31 }),
    startMempoolSimulator({ scenario: 'upstream-down', seed: 31 }),
  ]);
  [service, upstreamDown] = await Promise.all([
    startTestService({ X402_DEMO_RATE_LIMIT_MAX: '4' }, { devnet, simulator: calm }),
    startTestService({}, { devnet, simulator: down }),
  ]);
  // mempool.space alone: no Core, so the broadcast reads prevouts and the next block is a projection.
  mempoolOnly = await startTestService({ MEMPOOL_URL: calm.url }, { devnet });
});

afterAll(async () => {
  await Promise.all([service, mempoolOnly, upstreamDown].map((s) => s?.close()));
  await Promise.all([devnet?.stop(), calm?.close(), down?.close()]);
  removeScratch();
});

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

/** The 200 schema the service publishes for an operation. */
async function publishedSchema(target: RunningFeeService, path: string, method: 'get' | 'post') {
  const openapi = (await (await fetch(`${target.url}/api/openapi.json`)).json()) as JsonBody;
  return ajv.compile(openapi['paths'][path][method].responses['200'].content['application/json'].schema);
}

const payerKey = (index: number) => devnet.accounts.payers[index]!.privateKey;
const payerAddress = (index: number) => devnet.accounts.payers[index]!.address;
const officialClient = (index: number) =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(payerKey(index)))),
  );
const jsonPost = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Pays `url` with a signed payment and returns the answer; the payer's balance before and after. */
async function payOnce(url: string, payer: number, init?: RequestInit) {
  const before = await balanceOf(devnet, payerAddress(payer));
  const header = await signPayment(url, payerKey(payer) as Hex, init);
  const response = await fetch(url, { ...init, headers: { ...init?.headers, 'payment-signature': header } });
  const body = (await response.json()) as JsonBody;
  return { response, body, before, after: await balanceOf(devnet, payerAddress(payer)) };
}

describe('the official x402 client', () => {
  it.each([
    ['GET', '/api/v1/mining/nextblock', 10_000n],
    ['GET', '/api/v1/fees/landscape', 5_000n],
  ] as const)(
    'pays %s %s and gets a settled body valid against the published schema',
    async (_method, path, price) => {
      const validate = await publishedSchema(service, path, 'get');
      const before = await balanceOf(devnet, payerAddress(0));
      const response = await officialClient(0)(`${service.url}${path}`);
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
      const receipt = decodeHeaderJson(response.headers.get('payment-response')!) as { success: boolean };
      expect(receipt.success).toBe(true);
      expect(await balanceOf(devnet, payerAddress(0))).toBe(before - price);
    },
  );

  it('pays a broadcast, and the transaction is in the mempool with the fee the answer states', async () => {
    const validate = await publishedSchema(service, '/api/v1/broadcast', 'post');
    const spend = faucetSpend(calm.model, { output: 50, fee: 3_000n });
    const before = await balanceOf(devnet, payerAddress(0));
    const response = await officialClient(0)(`${service.url}/api/v1/broadcast`, jsonPost({ hex: spend.hex }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as JsonBody;
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(body['data']).toMatchObject({
      txid: spend.txid,
      vsize: 110,
      fee_sat: 3_000,
      fee_rate_sat_vb: 27.273,
      fee_basis: 'testmempoolaccept',
      broadcast_via: 'mempool.space',
      next_block: { basis: 'mempool_projection', would_be_included_next: true, projected_block_index: 0 },
    });
    expect(
      (decodeHeaderJson(response.headers.get('payment-response')!) as { success: boolean }).success,
    ).toBe(true);
    expect(await balanceOf(devnet, payerAddress(0))).toBe(before - 10_000n);
    expect(calm.model.findTx(spend.txid)?.tx.fee).toBe(3_000);
  });

  it('rehearses on the x402 demo: 200 with every check, never settled, the balance untouched', async () => {
    const validate = await publishedSchema(service, '/api/v1/x402-demo', 'get');
    const before = await balanceOf(devnet, payerAddress(1));
    const response = await officialClient(1)(`${service.url}/api/v1/x402-demo`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-payment-settled')).toBe('false');
    expect(response.headers.get('payment-response')).toBeNull();
    const body = (await response.json()) as JsonBody;
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(body['data']).toMatchObject({ would_settle: true, settled: false, payer: payerAddress(1) });
    expect(body['data'].checks.every((check: { ok: boolean }) => check.ok)).toBe(true);
    expect(await balanceOf(devnet, payerAddress(1))).toBe(before);
  });
});

describe('bad input is refused before any challenge', () => {
  const cases: Array<[string, string, RequestInit | undefined, string]> = [
    ['a query on the next block', '/api/v1/mining/nextblock?fresh=1', undefined, 'invalid_request'],
    ['a query on the landscape', '/api/v1/fees/landscape?x=1', undefined, 'invalid_request'],
    ['a body that is not JSON', '/api/v1/broadcast', { method: 'POST', body: 'hex=00' }, 'invalid_request'],
    ['non-hex characters', '/api/v1/broadcast', jsonPost({ hex: 'zz'.repeat(80) }), 'invalid_request'],
    ['an unknown field', '/api/v1/broadcast', jsonPost({ hex: buildRawTx(), fee: 1 }), 'invalid_request'],
    [
      'an odd number of hex characters',
      '/api/v1/broadcast',
      jsonPost({ hex: `${buildRawTx()}0` }),
      'hex_odd_length',
    ],
    ['a too short hex', '/api/v1/broadcast', jsonPost({ hex: '0200' }), 'hex_length_out_of_range'],
    [
      'bytes that do not parse',
      '/api/v1/broadcast',
      jsonPost({ hex: 'ab'.repeat(100) }),
      'transaction_unparsable',
    ],
  ];
  it.each(FRAMEWORKS)('on %s', async (framework) => {
    const target =
      framework === 'fastify'
        ? service
        : await startTestService({ FRAMEWORK: framework }, { devnet, simulator: calm });
    try {
      const before = await balanceOf(devnet, payerAddress(1));
      for (const [what, path, init, code] of cases) {
        const response = await fetch(`${target.url}${path}`, init);
        expect(response.status, what).toBe(400);
        expect(response.headers.get('payment-required'), what).toBeNull();
        const body = (await response.json()) as { error: { code: string } };
        assertErrorBody(body);
        expect(body.error.code, what).toBe(code);
        // The official client, ready to pay, gets the same refusal and pays nothing.
        const paying = await officialClient(1)(`${target.url}${path}`, init);
        expect(paying.status, what).toBe(400);
        await paying.body?.cancel();
      }
      expect(await balanceOf(devnet, payerAddress(1))).toBe(before);
      const large = await fetch(`${target.url}/api/v1/broadcast`, jsonPost({ hex: 'ab'.repeat(600_000) }));
      expect(large.status).toBe(413);
      // Valid input gets its challenge.
      const valid = await fetch(`${target.url}/api/v1/broadcast`, jsonPost({ hex: buildRawTx() }));
      expect(valid.status).toBe(402);
      expect(challengeOf(valid).accepts[0]?.amount).toBe('10000');
    } finally {
      if (target !== service) await target.close();
    }
  });
});

describe('failures after payment are never settled', () => {
  it('answers 503 for the next block and the landscape while the upstream is down', async () => {
    for (const path of ['/api/v1/mining/nextblock', '/api/v1/fees/landscape']) {
      const { response, body, before, after } = await payOnce(`${upstreamDown.url}${path}`, 2);
      expect(response.status, path).toBe(503);
      expect(response.headers.get('payment-response')).toBeNull();
      assertErrorBody(body);
      expect(body['error']).toMatchObject({ code: 'upstream_unavailable', retryable: true });
      expect(after).toBe(before);
    }
  });

  it.each([
    [
      'a node policy refusal (dust, Core -26) answers 422 with the reason',
      () => faucetSpend(calm.model, { output: 51, outputs: [{ script: paymentScript(), value: 100n }] }).hex,
      422,
      'node_rejected',
      /dust/,
    ],
    [
      'missing inputs (Core -25) answer 409',
      () => buildRawTx({ inputTxidByte: 0x77 }),
      409,
      'inputs_missing_or_spent',
      /missing/,
    ],
    [
      'a fee rate above the absurd-fee limit answers 422',
      () => faucetSpend(calm.model, { output: 52, fee: 200_000n }).hex,
      422,
      'fee_rate_too_high',
      /above the limit of 1000 sat\/vB/,
    ],
  ] as const)('%s', async (_what, hex, status, code, message) => {
    const { response, body, before, after } = await payOnce(
      `${service.url}/api/v1/broadcast`,
      2,
      jsonPost({ hex: hex() }),
    );
    expect(response.status).toBe(status);
    expect(response.headers.get('payment-response')).toBeNull();
    assertErrorBody(body);
    expect(body['error'].code).toBe(code);
    expect(body['error'].message).toMatch(message);
    expect(after).toBe(before);
  });

  it('answers 503 for a broadcast while mempool.space is down, and never settles', async () => {
    // A simulator and a mempool.space-only service of their own: the faults stay with them.
    const own = await startMempoolSimulator({ scenario: 'calm', seed: 32 });
    const target = await startTestService({ MEMPOOL_URL: own.url }, { devnet });
    try {
      const spend = faucetSpend(own.model, { output: 50, fee: 3_000n });
      own.injectFault({ status: 503, count: 100_000, pathPrefix: '/api/tx' });
      const { response, body, before, after } = await payOnce(
        `${target.url}/api/v1/broadcast`,
        2,
        jsonPost({ hex: spend.hex }),
      );
      expect(response.status).toBe(503);
      expect(response.headers.get('payment-response')).toBeNull();
      assertErrorBody(body);
      expect(body['error']).toMatchObject({ code: 'upstream_unavailable', retryable: true });
      expect(after).toBe(before);
      expect(own.model.findTx(spend.txid)).toBeUndefined();
    } finally {
      await target.close();
      await own.close();
    }
  });

  it('answers a second broadcast of one transaction 409 already_known with its txid, free', async () => {
    const spend = faucetSpend(calm.model, { output: 53, fee: 2_500n });
    const url = `${service.url}/api/v1/broadcast`;
    const first = await payOnce(url, 3, jsonPost({ hex: spend.hex }));
    expect(first.response.status).toBe(200);
    expect(first.after).toBe(first.before - 10_000n);
    const second = await payOnce(url, 3, jsonPost({ hex: spend.hex }));
    expect(second.response.status).toBe(409);
    expect(second.response.headers.get('x-transaction-id')).toBe(spend.txid);
    expect(second.body['error'].code).toBe('already_known');
    expect(second.body['error'].message).toContain(spend.txid);
    expect(second.after).toBe(second.before);
  });

  it('answers 503 retryable while Core is warming up, then broadcasts with allow_high_fee above the limit', async () => {
    const url = `${service.url}/api/v1/broadcast`;
    const spend = faucetSpend(calm.model, { output: 54, fee: 150_000n });
    calm.injectFault({ status: 'warmup', count: 1 });
    const warming = await payOnce(url, 3, jsonPost({ hex: spend.hex, allow_high_fee: true }));
    expect(warming.response.status).toBe(503);
    expect(warming.body['error']).toMatchObject({ code: 'upstream_warming_up', retryable: true });
    expect(warming.after).toBe(warming.before);
    const sent = await payOnce(url, 3, jsonPost({ hex: spend.hex, allow_high_fee: true }));
    expect(sent.response.status).toBe(200);
    expect(sent.body['data']).toMatchObject({ txid: spend.txid, fee_sat: 150_000 });
    expect(sent.body['meta']).toMatchObject({ allow_high_fee: true, max_fee_rate_sat_vb: 1000 });
  });

  it('reads the prevouts from mempool.space when Core is not configured, and maps its text errors', async () => {
    const url = `${mempoolOnly.url}/api/v1/broadcast`;
    const spend = faucetSpend(calm.model, { output: 55, fee: 4_000n });
    const sent = await payOnce(url, 2, jsonPost({ hex: spend.hex }));
    expect(sent.response.status).toBe(200);
    expect(sent.body['data']).toMatchObject({
      fee_sat: 4_000,
      fee_basis: 'prevouts',
      broadcast_via: 'mempool.space',
    });
    calm.setBroadcastErrorFormat('code');
    try {
      const value = calm.model.faucet.funding.outputs[56]!.value;
      const dust = faucetSpend(calm.model, {
        output: 56,
        outputs: [
          { script: paymentScript(), value: 100n },
          { script: paymentScript(8), value: value - 2_100n },
        ],
      });
      const refused = await payOnce(url, 2, jsonPost({ hex: dust.hex }));
      expect(refused.response.status).toBe(422);
      expect(refused.body['error']).toMatchObject({
        code: 'node_rejected',
        message: 'the node refused it: dust',
      });
      expect(refused.after).toBe(refused.before);
    } finally {
      calm.setBroadcastErrorFormat('json');
    }
    const nextblock = await payOnce(`${mempoolOnly.url}/api/v1/mining/nextblock`, 2);
    expect(nextblock.response.status).toBe(200);
    expect(nextblock.body['data']).toMatchObject({
      basis: 'mempool_projection',
      top_transactions_basis: 'recent_arrivals_above_entry',
    });
  });
});

describe('the x402 demo', () => {
  it('challenges with the decision’s terms and explains the three steps', async () => {
    const response = await fetch(`${service.url}/api/v1/x402-demo`);
    expect(response.status).toBe(402);
    expect(response.headers.get('x-payment-settled')).toBe('false');
    const challenge = challengeOf(response);
    expect(challenge.resource.url).toBe(`${service.baseUrl}/api/v1/x402-demo`);
    expect(challenge.accepts[0]).toMatchObject({ amount: '1000', maxTimeoutSeconds: 60 });
    const body = (await response.json()) as JsonBody;
    expect(body['demo'].steps).toHaveLength(3);
  });

  it('answers what a client sends as the real resource would (400 or 402) with the reason, never 500 or more, and rate limits itself', async () => {
    const demo = await startTestService({ X402_DEMO_RATE_LIMIT_MAX: '5' }, { devnet, simulator: calm });
    try {
      const url = `${demo.url}/api/v1/x402-demo`;
      const valid = await signPayment(url, payerKey(1) as Hex);
      const tampered = Buffer.from(
        Buffer.from(valid, 'base64')
          .toString('utf8')
          .replace(/"value":"\d+"/, '"value":"999"'),
      ).toString('base64');
      // As the real resource: a header that is no payment is 400, a refused payment 402.
      const headers = [
        ['not base64!', 400],
        [Buffer.from('{}').toString('base64'), 400],
        [tampered, 402],
        ['e30', 400],
      ] as const;
      for (const [header, status] of headers) {
        const response = await fetch(url, { headers: { 'payment-signature': header } });
        expect(response.status, header.slice(0, 20)).toBe(status);
        expect(response.headers.get('payment-required'), header.slice(0, 20)).toMatch(/^eyJ/);
        const body = (await response.json()) as JsonBody;
        expect(body['error'], header.slice(0, 20)).toEqual(expect.any(String));
        expect(body['demo'].settled).toBe(false);
      }
      const limited = await fetch(url);
      expect(limited.status).toBe(429);
      expect(await limited.text()).toBe('');
    } finally {
      await demo.close();
    }
  });
});
