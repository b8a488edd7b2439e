import type { PaymentRequired } from '@tollbooth/core';
import { check, checkEqual } from '../audit-failure';
import { type Answer, challengeOf, decodeHeader, TargetUnreachable } from '../http';
import {
  checkMalformed,
  checkNotRun,
  checkRejected,
  controlOf,
  defineAudit,
  encodeJson,
  paymentFor,
  sendPayment,
} from './helpers';

/** A JSON value whose base64 holds `+` and `/`, so the URL-safe alphabet differs from the standard one. */
const SPIKY = { x402Version: 2, note: '??>>??>>~~~' };

/** A URL-safe spelling of a standard base64 value that holds `+` or `/`. */
const urlSafeOf = (value: string) => value.replaceAll('+', '-').replaceAll('/', '_');

/**
 * Fails unless a payment header was refused the way the x402 HTTP transport allows: 402 with a
 * fresh PAYMENT-REQUIRED challenge, or 400 (an invalid payment).
 */
function checkRefused(answer: Answer, what: string): void {
  check(
    answer.status === 402 || answer.status === 400,
    `${what} answered ${answer.status}, expected 402 with a challenge or 400: ${answer.text.slice(0, 160)}`,
  );
  if (answer.status !== 402) return;
  const challenge = decodeHeader(answer, 'payment-required');
  check(
    typeof challenge['x402Version'] === 'number' && Array.isArray(challenge['accepts']),
    `${what}: the PAYMENT-REQUIRED of the 402 is not a challenge: ${JSON.stringify(challenge).slice(0, 160)}`,
  );
}

/** A padded base64 JSON payment header (its JSON grown by a key until the encoding needs padding). */
function paddedHeader(): string {
  for (let i = 0; ; i++) {
    const value = encodeJson({ x402Version: 2, payload: 'nothing', pad: 'x'.repeat(i) });
    if (value.endsWith('=')) return value;
  }
}

/** What an answer says about a refused payment: its status and the error of its challenge. */
function verdictOf(answer: Answer): string {
  const header = answer.header('payment-required');
  const error = header ? (decodeHeader(answer, 'payment-required')['error'] ?? null) : null;
  return `${answer.status} ${JSON.stringify(error)}`;
}

/** An x402 rule: a broken payment header is refused, whatever the server calls the problem. */
const refusal = (id: string, what: string, value: () => string) =>
  defineAudit({
    id,
    level: 'MUST',
    profile: 'x402',
    sentence: `MUST refuse a payment header ${what} with 402 and a PAYMENT-REQUIRED challenge (or 400), never serving the resource`,
    needs: 'server',
    async run(ctx) {
      checkRefused(await sendPayment(ctx, ctx.paths.paid, value()), `a payment header ${what}`);
      checkNotRun(ctx);
    },
  });

/** The four malformed forms of the HTTP transport's "Invalid Payment", the last built from a live challenge. */
function malformedHeaders(challenge: PaymentRequired): Array<[what: string, value: string]> {
  return [
    ['that is not base64', '!!!not-base64!!!'],
    ['that is not JSON', Buffer.from('{not valid json', 'utf8').toString('base64')],
    ['whose JSON is not a PaymentPayload', encodeJson({ hello: 'world' })],
    [
      'whose v2 payload has no accepted requirement',
      encodeJson({ x402Version: 2, resource: challenge.resource, payload: { signature: '0x00' } }),
    ],
  ];
}

const V1_PAYLOAD = { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x00' } };

export const decodingAudits = [
  defineAudit({
    id: 'ADEC-01',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST refuse a payment header in URL-safe base64 with 400 payment_header_invalid_base64 and a PAYMENT-REQUIRED challenge',
    needs: 'server',
    async run(ctx) {
      const standard = encodeJson(SPIKY);
      check(/[+/]/.test(standard), 'the probe does not exercise the alphabet');
      const urlSafe = urlSafeOf(standard);
      checkMalformed(await sendPayment(ctx, ctx.paths.paid, urlSafe), 'payment_header_invalid_base64');
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-02',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST refuse whitespace inside a payment header with 400 payment_header_invalid_base64 and a PAYMENT-REQUIRED challenge',
    needs: 'server',
    async run(ctx) {
      const value = encodeJson({ x402Version: 2 });
      const spaced = `${value.slice(0, 8)} ${value.slice(8)}`;
      checkMalformed(await sendPayment(ctx, ctx.paths.paid, spaced), 'payment_header_invalid_base64');
    },
  }),
  defineAudit({
    id: 'ADEC-03',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST accept a payment header whose base64 padding is missing',
    needs: 'server',
    async run(ctx) {
      if (!ctx.control) {
        // Decoding must get past base64 to the schema check.
        const unpadded = encodeJson({}).replace(/=+$/, '');
        checkMalformed(await sendPayment(ctx, ctx.paths.paid, unpadded), 'payment_payload_invalid');
        return;
      }
      const challenge = await challengeOf(ctx, ctx.paths.paid);
      // A client may add keys to `extra`: grow one until the base64 needs padding.
      const extra = challenge.accepts[0]?.extra ?? {};
      let value = '';
      for (let i = 0; !value.endsWith('=') && i < 3; i++) {
        value = ctx.control.pay(challenge, { accepted: { extra: { ...extra, pad: 'x'.repeat(i) } } });
      }
      check(value.endsWith('='), 'could not build a padded payment to strip');
      const answer = await sendPayment(ctx, ctx.paths.paid, value.replace(/=+$/, ''));
      checkEqual(answer.status, 200, `status of an unpadded payment (${answer.text.slice(0, 120)})`);
    },
  }),
  defineAudit({
    id: 'ADEC-04',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a payment header that is not JSON with 400 payment_header_invalid_json and a PAYMENT-REQUIRED challenge',
    needs: 'server',
    async run(ctx) {
      const value = Buffer.from('this is not json', 'utf8').toString('base64');
      checkMalformed(await sendPayment(ctx, ctx.paths.paid, value), 'payment_header_invalid_json');
    },
  }),
  defineAudit({
    id: 'ADEC-05',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer JSON that is not a PaymentPayload with 400 payment_payload_invalid and a PAYMENT-REQUIRED challenge',
    needs: 'server',
    async run(ctx) {
      const value = encodeJson({ x402Version: 2, payload: 'nothing' });
      checkMalformed(await sendPayment(ctx, ctx.paths.paid, value), 'payment_payload_invalid');
    },
  }),
  defineAudit({
    id: 'ADEC-06',
    level: 'MUST',
    profile: 'x402',
    sentence: 'MUST refuse a 64 KiB payment header with 400, 402 or 431, never running the handler',
    needs: 'server',
    async run(ctx) {
      const answer = await sendPayment(ctx, ctx.paths.paid, 'A'.repeat(64 * 1024)).catch((error: unknown) => {
        if (error instanceof TargetUnreachable) return undefined;
        throw error;
      });
      // A server may also drop the connection on an oversize head: that refuses it too.
      if (answer)
        check([400, 402, 431].includes(answer.status), `status of an oversize header: ${answer.status}`);
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-07',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a payment header longer than the configured cap with 400 payment_header_too_large and a PAYMENT-REQUIRED challenge',
    needs: 'control',
    async run(ctx) {
      controlOf(ctx);
      checkMalformed(await sendPayment(ctx, ctx.paths.paid, 'A'.repeat(9_000)), 'payment_header_too_large');
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-08',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST accept the legacy X-PAYMENT header and answer with X-PAYMENT-RESPONSE',
    needs: 'control',
    async run(ctx) {
      const value = await paymentFor(ctx);
      const answer = await sendPayment(ctx, ctx.paths.paid, value, 'X-PAYMENT');
      checkEqual(answer.status, 200, 'status of an X-PAYMENT payment');
      checkEqual(decodeHeader(answer, 'x-payment-response')['success'], true, 'X-PAYMENT-RESPONSE success');
      check(
        answer.header('access-control-expose-headers')?.toUpperCase().includes('X-PAYMENT-RESPONSE'),
        'X-PAYMENT-RESPONSE is not exposed to browsers',
      );
    },
  }),
  defineAudit({
    id: 'ADEC-09',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST answer a v1 payment on a v2 route with 402 payment_version_mismatch',
    needs: 'server',
    async run(ctx) {
      checkRejected(
        await sendPayment(ctx, ctx.paths.paid, encodeJson(V1_PAYLOAD)),
        'payment_version_mismatch',
      );
      checkNotRun(ctx);
    },
  }),
  refusal('ADEC-10', 'in URL-safe base64', () => urlSafeOf(encodeJson(SPIKY))),
  refusal('ADEC-11', 'with whitespace inside', () => {
    const value = encodeJson({ x402Version: 2 });
    return `${value.slice(0, 8)} ${value.slice(8)}`;
  }),
  refusal('ADEC-12', 'that is not JSON', () => Buffer.from('this is not json', 'utf8').toString('base64')),
  refusal('ADEC-13', 'whose JSON is not a PaymentPayload', () =>
    encodeJson({ x402Version: 2, payload: 'nothing' }),
  ),
  refusal('ADEC-14', 'carrying an x402 v1 payload on a v2 route', () => encodeJson(V1_PAYLOAD)),
  defineAudit({
    id: 'ADEC-15',
    level: 'SHOULD',
    profile: 'x402',
    sentence: 'SHOULD answer a payment header without its base64 padding as it answers the padded header',
    needs: 'server',
    async run(ctx) {
      const padded = paddedHeader();
      const withPadding = await sendPayment(ctx, ctx.paths.paid, padded);
      const without = await sendPayment(ctx, ctx.paths.paid, padded.replace(/=+$/, ''));
      checkEqual(
        verdictOf(without),
        verdictOf(withPadding),
        'the answer without padding against the padded one',
      );
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-16',
    level: 'SHOULD',
    profile: 'x402',
    sentence:
      'SHOULD answer a malformed payment header (not base64, not JSON, not a PaymentPayload, a v2 payload without a required field) with 400, the HTTP transport’s Invalid Payment',
    needs: 'server',
    async run(ctx) {
      const challenge = await challengeOf(ctx, ctx.paths.paid);
      for (const [what, value] of malformedHeaders(challenge)) {
        const answer = await sendPayment(ctx, ctx.paths.paid, value);
        check(
          answer.status === 400,
          `a payment header ${what} answered ${answer.status}, expected 400: ${answer.text.slice(0, 120)}`,
        );
      }
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-17',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a v2 payment without a required field (payload, accepted) with 400 payment_payload_invalid and a PAYMENT-REQUIRED challenge',
    needs: 'server',
    async run(ctx) {
      const challenge = await challengeOf(ctx, ctx.paths.paid);
      const accepted = challenge.accepts[0];
      const whole = {
        x402Version: 2,
        resource: challenge.resource,
        accepted,
        payload: { signature: '0x00' },
      };
      for (const field of ['payload', 'accepted'] as const) {
        const { [field]: _left, ...without } = whole;
        checkMalformed(
          await sendPayment(ctx, ctx.paths.paid, encodeJson(without)),
          'payment_payload_invalid',
        );
      }
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-18',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a malformed legacy X-PAYMENT header as a malformed PAYMENT-SIGNATURE: 400 with its code and a PAYMENT-REQUIRED challenge',
    needs: 'server',
    async run(ctx) {
      const send = (value: string) => sendPayment(ctx, ctx.paths.paid, value, 'X-PAYMENT');
      checkMalformed(await send('!!!not-base64!!!'), 'payment_header_invalid_base64');
      checkMalformed(
        await send(Buffer.from('{not valid json').toString('base64')),
        'payment_header_invalid_json',
      );
      checkMalformed(
        await send(encodeJson({ x402Version: 2, payload: 'nothing' })),
        'payment_payload_invalid',
      );
      checkNotRun(ctx);
    },
  }),
];
