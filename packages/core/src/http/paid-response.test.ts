import { describe, expect, it } from 'vitest';
import { EXPOSED_PAYMENT_HEADERS, toPaidResponse, toStoredResponse } from './paid-response';

describe('toPaidResponse', () => {
  const receipt = { success: true, transaction: '0xabc', network: 'eip155:8453', payer: '0xpayer' } as const;

  it('adds the receipt in the receipt header and exposes the payment headers, keeping status and body', () => {
    const body = new Uint8Array([1, 2, 3]);
    const paid = toPaidResponse(
      { status: 201, headers: { 'content-type': 'text/plain' }, body },
      'payment-response',
      receipt,
    );
    expect(paid).toStrictEqual({
      status: 201,
      headers: {
        'content-type': 'text/plain',
        'payment-response': Buffer.from(JSON.stringify(receipt)).toString('base64'),
        'access-control-expose-headers': EXPOSED_PAYMENT_HEADERS,
      },
      body,
    });
    expect(EXPOSED_PAYMENT_HEADERS).toBe('PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE');
  });

  it('uses X-PAYMENT-RESPONSE for a v1 payment and keeps the headers the handler exposed', () => {
    const paid = toPaidResponse(
      { status: 200, headers: { 'access-control-expose-headers': 'X-Trace' }, body: new Uint8Array() },
      'x-payment-response',
      receipt,
    );
    expect(JSON.parse(Buffer.from(paid.headers['x-payment-response']!, 'base64').toString())).toStrictEqual(
      receipt,
    );
    expect(paid.headers['payment-response']).toBeUndefined();
    expect(paid.headers['access-control-expose-headers']).toBe(`X-Trace, ${EXPOSED_PAYMENT_HEADERS}`);
  });
});

describe('toStoredResponse', () => {
  it('lower-cases header names, joins lists with commas and set-cookie values with newlines', () => {
    const body = new Uint8Array([9]);
    const stored = toStoredResponse({
      status: 200,
      headers: {
        'Content-Type': 'application/json',
        Vary: ['Accept', 'Origin'],
        'Set-Cookie': ['a=1', 'b=2'],
        'Content-Length': 12 as unknown as string,
      },
      body,
    });
    expect(stored).toStrictEqual({
      status: 200,
      headers: {
        'content-type': 'application/json',
        vary: 'Accept, Origin',
        'set-cookie': 'a=1\nb=2',
        'content-length': '12',
      },
      body,
    });
  });

  it('adds extra headers over the handler’s own', () => {
    const stored = toStoredResponse(
      { status: 404, headers: { 'x-a': '1', 'x-b': '2' }, body: new Uint8Array() },
      { 'x-b': 'extra', 'x-c': '3' },
    );
    expect(stored.headers).toStrictEqual({ 'x-a': '1', 'x-b': 'extra', 'x-c': '3' });
    expect(stored.status).toBe(404);
  });
});
