import { check, checkEqual } from '../audit-failure';
import { AUDIT_EXPOSED_HEADER } from '../fixture';
import { send } from '../http';
import { controlOf, defineAudit, pathOf, paymentFor, payOnce, sendPayment } from './helpers';

const exposes = (value: string | undefined, name: string) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .includes(name);

export const corsAudits = [
  defineAudit({
    id: 'ACORS-01',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST expose PAYMENT-REQUIRED through Access-Control-Expose-Headers on a 402',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, ctx.paths.paid, { headers: { origin: 'https://app.example' } });
      const expose = answer.header('access-control-expose-headers');
      check(exposes(expose, 'PAYMENT-REQUIRED'), `Access-Control-Expose-Headers is ${expose}`);
    },
  }),
  defineAudit({
    id: 'ACORS-02',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST expose PAYMENT-RESPONSE through Access-Control-Expose-Headers on a paid answer',
    needs: 'control',
    async run(ctx) {
      const answer = await payOnce(ctx);
      checkEqual(answer.status, 200, 'status of a paid request');
      const expose = answer.header('access-control-expose-headers');
      check(exposes(expose, 'PAYMENT-RESPONSE'), `Access-Control-Expose-Headers is ${expose}`);
    },
  }),
  defineAudit({
    id: 'ACORS-03',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST let an OPTIONS preflight of a paid route through untouched (no 402, no challenge)',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, ctx.paths.paid, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'payment-signature',
        },
      });
      check(answer.status !== 402, 'the preflight was answered 402');
      check(!answer.header('payment-required'), 'the preflight carries PAYMENT-REQUIRED');
    },
  }),
  defineAudit({
    id: 'ACORS-04',
    level: 'SHOULD',
    profile: 'tollbooth',
    sentence:
      'SHOULD keep the headers middleware before it set (Access-Control-Allow-Origin) on a 402, and add to their Access-Control-Expose-Headers',
    needs: 'control',
    async run(ctx) {
      const origin = 'https://app.example';
      const answer = await send(ctx, ctx.paths.paid, { headers: { origin } });
      checkEqual(answer.status, 402, 'status without a payment');
      checkEqual(answer.header('access-control-allow-origin'), origin, 'Access-Control-Allow-Origin');
      const expose = answer.header('access-control-expose-headers');
      check(exposes(expose, 'PAYMENT-REQUIRED'), `Access-Control-Expose-Headers is ${expose}`);
      check(
        exposes(expose, AUDIT_EXPOSED_HEADER.toUpperCase()),
        `Access-Control-Expose-Headers is ${expose}`,
      );
    },
  }),
  defineAudit({
    id: 'APASS-01',
    level: 'MUST',
    profile: 'x402',
    sentence: 'MUST pass requests to free routes through untouched',
    needs: 'server',
    uses: ['free'],
    async run(ctx) {
      const answer = await send(ctx, pathOf(ctx, 'free'));
      check(answer.status >= 200 && answer.status < 400, `status of a free route: ${answer.status}`);
      check(!answer.header('payment-required'), 'a free route sends PAYMENT-REQUIRED');
      check(!answer.header('payment-response'), 'a free route sends PAYMENT-RESPONSE');
      if (ctx.control) checkEqual(answer.text, '{"free":true}', 'the free handler body');
    },
  }),
  defineAudit({
    id: 'APASS-02',
    level: 'MUST',
    profile: 'x402',
    sentence: 'MUST ignore a payment header sent to a free route: no verification, no settlement',
    needs: 'control',
    uses: ['free'],
    async run(ctx) {
      const control = controlOf(ctx);
      const value = await paymentFor(ctx);
      const answer = await sendPayment(ctx, pathOf(ctx, 'free'), value);
      checkEqual(answer.status, 200, 'status of a free route');
      check(!answer.header('payment-response'), 'a free route sends PAYMENT-RESPONSE');
      checkEqual(control.facilitator.calls.verify + control.facilitator.calls.settle, 0, 'facilitator calls');
    },
  }),
];
