// A malformed payment on the fee service's three mounts, sent raw: a payment header that is not
// base64, not JSON, not a PaymentPayload, or a v2 payload without a required field answers 400
// with the Error body and the PAYMENT-REQUIRED challenge, in PAYMENT-SIGNATURE and in X-PAYMENT
// (docs/errors.md#400-a-payment-header-that-is-no-payment); a well-formed payment that is refused
// stays 402. Nothing here reaches a facilitator: every refusal happens before one is asked.
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { createPaymentPayload } from '@tollbooth/evm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawResponse, rawRequest, sendRaw } from '../../../test/support/target-apps';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';

const PATH = '/api/v1/fees/now';
let simulator: MempoolSimulator;
const services: Record<string, RunningFeeService> = {};

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 5 });
  for (const framework of FRAMEWORKS) {
    services[framework] = await startTestService(
      {
        FRAMEWORK: framework,
        OBSERVATORY_ENABLED: 'false',
        RATE_LIMIT_ENABLED: 'false',
        FACILITATOR_URL: 'http://127.0.0.1:9',
        PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      },
      { simulator },
    );
  }
});
afterAll(async () => {
  for (const service of Object.values(services)) await service.close();
  await simulator?.close();
  removeScratch();
});

const portOf = (service: RunningFeeService) => Number(new URL(service.url).port);
const send = (service: RunningFeeService, header: string, value: string) =>
  sendRaw(portOf(service), rawRequest('GET', PATH, portOf(service), [`${header}: ${value}`]));
const challengeOf = (answer: RawResponse) =>
  decodeHeaderJson(answer.headers['payment-required'] ?? '') as PaymentRequired;

/** A payment for the decision, signed by a fresh key, its JSON changed by `change`. */
async function signed(
  service: RunningFeeService,
  change: (payment: Record<string, unknown>) => void = () => undefined,
): Promise<string> {
  const unpaid = await sendRaw(portOf(service), rawRequest('GET', PATH, portOf(service)));
  const payment = (await createPaymentPayload({
    paymentRequired: challengeOf(unpaid),
    account: privateKeyToAccount(generatePrivateKey()),
  })) as unknown as Record<string, unknown>;
  change(payment);
  return encodeHeader(payment);
}

const MALFORMED: ReadonlyArray<
  readonly [what: string, value: (service: RunningFeeService) => Promise<string> | string, code: string]
> = [
  ['not base64', () => '!!!not-base64!!!', 'payment_header_invalid_base64'],
  ['not JSON', () => Buffer.from('{not valid json').toString('base64'), 'payment_header_invalid_json'],
  ['no PaymentPayload', () => encodeHeader({ hello: 'world' }), 'payment_payload_invalid'],
  ['a v2 payload without accepted', (s) => signed(s, (p) => delete p['accepted']), 'payment_payload_invalid'],
];

describe.each(FRAMEWORKS)('a payment on the %s mount', (framework) => {
  it.each(MALFORMED)('answers %s with 400, the Error body and the challenge', async (_what, value, code) => {
    const service = services[framework]!;
    for (const header of ['PAYMENT-SIGNATURE', 'X-PAYMENT']) {
      const answer = await send(service, header, await value(service));
      expect(answer.status, header).toBe(400);
      const error = (JSON.parse(answer.body) as { error: Record<string, unknown> }).error;
      expect(error, header).toMatchObject({ code, retryable: false, request_id: expect.any(String) });
      expect(challengeOf(answer), header).toMatchObject({
        x402Version: 2,
        error: code,
        resource: { url: `${service.baseUrl}${PATH}` },
        accepts: [{ amount: '1000', maxTimeoutSeconds: 60 }],
      });
    }
  });

  it('still answers a well-formed payment that is refused with 402 and a fresh challenge', async () => {
    const service = services[framework]!;
    const cases = [
      [
        await signed(service, (p) => Object.assign(p['accepted'] as object, { amount: '999' })),
        'payment_amount_mismatch',
      ],
      [
        await signed(service, (p) =>
          Object.assign(p['payload'] as object, { signature: `0x${'11'.repeat(65)}` }),
        ),
        'payment_signature_invalid',
      ],
    ] as const;
    for (const [value, code] of cases) {
      const answer = await send(service, 'PAYMENT-SIGNATURE', value);
      expect(answer.status, code).toBe(402);
      expect(challengeOf(answer).error, code).toBe(code);
    }
  });
});
