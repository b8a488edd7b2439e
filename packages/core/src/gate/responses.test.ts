import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../errors/codes';
import { decodeHeaderJson } from '../protocol/codec';
import { compileRoutes } from '../routes/compile-routes';
import { ACCEPTS, BASE, bodyOf } from '../test-support/gate-harness';
import { createSimpleScheme } from '../test-support/simple-scheme';
import {
  baseHeaders,
  challengeResponse,
  codeOfBody,
  errorResponse,
  handlerAnswer,
  respond,
} from './responses';

const EXPOSED = 'PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE';

describe('baseHeaders', () => {
  it('names JSON, forbids caching, carries the request id and exposes the payment headers', () => {
    expect(baseHeaders('r-1')).toEqual({
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'x-request-id': 'r-1',
      'access-control-expose-headers': EXPOSED,
    });
  });
});

describe('errorResponse', () => {
  it.each([
    ['settlement_uncertain', 502],
    ['payment_in_progress', 409],
    ['paid_response_unavailable', 503],
    ['internal_error', 503],
  ] as const)('tells a client answered %s to retry the exact payload', (code, status) => {
    const response = errorResponse(code, 'r-2');
    expect(response.status).toBe(status);
    expect(bodyOf(response).error).toMatchObject({
      code,
      request_id: 'r-2',
      retryable: true,
      retry: { instruction: 'retry_exact_payment_payload' },
    });
  });

  it.each([
    ['ledger_unavailable', 503, true],
    ['facilitator_unavailable', 503, true],
    ['payment_identifier_conflict', 409, false],
    ['method_not_allowed', 405, false],
  ] as const)('gives %s no retry instruction', (code: ErrorCode, status, retryable) => {
    const response = errorResponse(code, 'r-3');
    expect(response.status).toBe(status);
    expect(bodyOf(response).error).toEqual({
      code,
      message: expect.any(String),
      request_id: 'r-3',
      retryable,
    });
  });

  it("carries a given message, else the code's documented meaning (an empty message too)", () => {
    expect(bodyOf(errorResponse('ledger_unavailable', 'r', 'the store is down')).error).toMatchObject({
      message: 'the store is down',
    });
    for (const message of [undefined, '']) {
      expect(bodyOf(errorResponse('ledger_unavailable', 'r', message)).error).toMatchObject({
        message: 'The settlement ledger could not be reached; nothing was charged.',
      });
    }
  });

  it('adds the extra headers over the base ones', () => {
    const response = errorResponse('resource_paused', 'r-4', undefined, { 'retry-after': '30' });
    expect(response.headers).toEqual({ ...baseHeaders('r-4'), 'retry-after': '30' });
  });
});

describe('challengeResponse', () => {
  const table = () =>
    compileRoutes(
      { 'GET /paid': { accepts: ACCEPTS }, 'GET /old': { accepts: ACCEPTS, x402Version: 1 } },
      { schemes: [createSimpleScheme()], baseUrl: BASE },
    );

  it('answers 402 with the challenge naming the code in the body and in PAYMENT-REQUIRED', () => {
    const match = table().match('GET', `${BASE}/paid`)!;
    const response = challengeResponse(match, 'r-5', 'payment_amount_mismatch', { 'payment-response': 'x' });
    expect(response.status).toBe(402);
    expect(bodyOf(response)).toMatchObject({ x402Version: 2, error: 'payment_amount_mismatch' });
    expect(decodeHeaderJson(response.headers['payment-required']!)).toEqual(bodyOf(response));
    expect(response.headers).toMatchObject({ ...baseHeaders('r-5'), 'payment-response': 'x' });
  });

  it('sends a v1 challenge in the body only', () => {
    const match = table().match('GET', `${BASE}/old`)!;
    const response = challengeResponse(match, 'r-6', 'payment_required');
    expect(bodyOf(response)).toMatchObject({ x402Version: 1, error: 'payment_required' });
    expect(response.headers).toEqual(baseHeaders('r-6'));
  });
});

describe('respond', () => {
  it('wraps an answer as the respond outcome', () => {
    const response = errorResponse('internal_error', 'r');
    expect(respond(response)).toEqual({ kind: 'respond', response });
  });
});

describe('handlerAnswer', () => {
  it('flattens the headers in lower case and exposes the payment headers beside its own', () => {
    const answer = handlerAnswer({
      status: 201,
      headers: { 'Content-Type': 'text/plain', 'Access-Control-Expose-Headers': 'X-Trace', Vary: ['A', 'B'] },
      body: Buffer.from('made'),
    });
    expect(answer).toEqual({
      status: 201,
      headers: {
        'content-type': 'text/plain',
        'access-control-expose-headers': `X-Trace, ${EXPOSED}`,
        vary: 'A, B',
      },
      body: Buffer.from('made'),
    });
    expect(handlerAnswer({ status: 200, headers: {}, body: new Uint8Array() }).headers).toEqual({
      'access-control-expose-headers': EXPOSED,
    });
  });
});

describe('codeOfBody', () => {
  const bytes = (text: string) => Buffer.from(text, 'utf8');

  it.each([
    ['an Error body', '{"error":{"code":"ledger_unavailable","message":"x"}}', 'ledger_unavailable'],
    ['a 402 body', '{"x402Version":2,"error":"payment_expired"}', 'payment_expired'],
    ['an error whose code is no string', '{"error":{"code":7}}', undefined],
    ['an error that is null', '{"error":null}', undefined],
    ['an error that is a number', '{"error":3}', undefined],
    ['no error', '{"ok":true}', undefined],
    ['JSON null', 'null', undefined],
    ['no JSON', '<html>', undefined],
  ])('reads the code of %s', (_what, text, code) => {
    expect(codeOfBody(bytes(text))).toBe(code);
  });
});
