import { check, checkEqual } from '../audit-failure';
import { challengeOf, decodeHeader } from '../http';
import {
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

export const decodingAudits = [
  defineAudit({
    id: 'ADEC-01',
    level: 'MUST',
    sentence: 'MUST refuse a payment header in URL-safe base64 with 402 payment_header_invalid_base64',
    needs: 'server',
    async run(ctx) {
      const standard = encodeJson(SPIKY);
      check(/[+/]/.test(standard), 'the probe does not exercise the alphabet');
      const urlSafe = standard.replaceAll('+', '-').replaceAll('/', '_');
      checkRejected(await sendPayment(ctx, ctx.paths.paid, urlSafe), 'payment_header_invalid_base64');
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-02',
    level: 'MUST',
    sentence: 'MUST refuse whitespace inside a payment header with 402 payment_header_invalid_base64',
    needs: 'server',
    async run(ctx) {
      const value = encodeJson({ x402Version: 2 });
      const spaced = `${value.slice(0, 8)} ${value.slice(8)}`;
      checkRejected(await sendPayment(ctx, ctx.paths.paid, spaced), 'payment_header_invalid_base64');
    },
  }),
  defineAudit({
    id: 'ADEC-03',
    level: 'MUST',
    sentence: 'MUST accept a payment header whose base64 padding is missing',
    needs: 'server',
    async run(ctx) {
      if (!ctx.control) {
        // Decoding must get past base64 to the schema check.
        const unpadded = encodeJson({}).replace(/=+$/, '');
        checkRejected(await sendPayment(ctx, ctx.paths.paid, unpadded), 'payment_payload_invalid');
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
    sentence: 'MUST answer a payment header that is not JSON with 402 payment_header_invalid_json',
    needs: 'server',
    async run(ctx) {
      const value = Buffer.from('this is not json', 'utf8').toString('base64');
      checkRejected(await sendPayment(ctx, ctx.paths.paid, value), 'payment_header_invalid_json');
    },
  }),
  defineAudit({
    id: 'ADEC-05',
    level: 'MUST',
    sentence: 'MUST answer JSON that is not a PaymentPayload with 402 payment_payload_invalid',
    needs: 'server',
    async run(ctx) {
      const value = encodeJson({ x402Version: 2, payload: 'nothing' });
      checkRejected(await sendPayment(ctx, ctx.paths.paid, value), 'payment_payload_invalid');
    },
  }),
  defineAudit({
    id: 'ADEC-06',
    level: 'MUST',
    sentence: 'MUST refuse a 64 KiB payment header with 402 or 431, never running the handler',
    needs: 'server',
    async run(ctx) {
      const answer = await sendPayment(ctx, ctx.paths.paid, 'A'.repeat(64 * 1024)).catch(() => undefined);
      // A server may also drop the connection on an oversize head: that refuses it too.
      if (answer) check([402, 431].includes(answer.status), `status of an oversize header: ${answer.status}`);
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-07',
    level: 'MUST',
    sentence: 'MUST answer a payment header longer than the configured cap with 402 payment_header_too_large',
    needs: 'control',
    async run(ctx) {
      controlOf(ctx);
      checkRejected(await sendPayment(ctx, ctx.paths.paid, 'A'.repeat(9_000)), 'payment_header_too_large');
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ADEC-08',
    level: 'MUST',
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
    sentence: 'MUST answer a v1 payment on a v2 route with 402 payment_version_mismatch',
    needs: 'server',
    async run(ctx) {
      const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x00' } };
      checkRejected(await sendPayment(ctx, ctx.paths.paid, encodeJson(v1)), 'payment_version_mismatch');
      checkNotRun(ctx);
    },
  }),
];
