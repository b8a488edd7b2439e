import { check, checkEqual } from '../audit-failure';
import { AUDIT_TX } from '../audit-scheme';
import { type Answer, decodeHeader, json } from '../http';
import type { AuditContext, AuditControl } from '../types';
import {
  checkErrorBody,
  checkNotRun,
  checkRanOnce,
  controlOf,
  defineAudit,
  paymentFor,
  payOnce,
  sendPayment,
} from './helpers';

/** Pays once while settlement times out (502), then retries the exact payload with `chain` scripted. */
async function retryUncertain(ctx: AuditContext, chain: AuditControl['chain']): Promise<Answer> {
  const control = controlOf(ctx);
  const value = await paymentFor(ctx);
  control.facilitator.settleAnswer = 'timeout';
  checkEqual((await sendPayment(ctx, ctx.paths.paid, value)).status, 502, 'status while uncertain');
  control.chain = chain;
  control.facilitator.settleAnswer = 'success';
  return sendPayment(ctx, ctx.paths.paid, value);
}

export const settlementAudits = [
  defineAudit({
    id: 'ASET-01',
    level: 'MUST',
    profile: 'x402',
    sentence:
      'MUST answer a valid payment with the handler response and a successful PAYMENT-RESPONSE receipt',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      const answer = await payOnce(ctx);
      checkEqual(answer.status, 200, `status of a paid request (${answer.text.slice(0, 160)})`);
      checkEqual(json(answer)['route'], 'paid', 'route in the handler body');
      const receipt = decodeHeader(answer, 'payment-response');
      checkEqual(receipt['success'], true, 'receipt success');
      check(
        typeof receipt['transaction'] === 'string' && receipt['transaction'] !== '',
        'receipt has no transaction',
      );
      checkRanOnce(control);
    },
  }),
  defineAudit({
    id: 'ASET-02',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST give the handler the accepted payment (its payer)',
    needs: 'control',
    async run(ctx) {
      const answer = await payOnce(ctx);
      const payer = json(answer)['payer'];
      check(typeof payer === 'string' && /^0x[0-9a-fA-F]{40}$/.test(payer), `the handler saw payer ${payer}`);
    },
  }),
  defineAudit({
    id: 'ASET-03',
    level: 'MUST',
    profile: 'x402',
    sentence:
      'MUST NOT settle when the handler answers with a status of 400 or more, and pass that answer on',
    needs: 'control',
    uses: ['failing'],
    async run(ctx) {
      const control = controlOf(ctx);
      const path = ctx.paths.failing!;
      const answer = await payOnce(ctx, path);
      checkEqual(answer.status, 422, 'status of the failing handler');
      checkEqual(json(answer)['error'], 'unprocessable', 'the failing handler body');
      check(!answer.header('payment-response'), 'a failed handler answer carries PAYMENT-RESPONSE');
      checkEqual(control.facilitator.calls.settle, 0, 'settle calls');
    },
  }),
  defineAudit({
    id: 'ASET-13',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST NOT send the headers a handler set (such as Set-Cookie) when a failed settlement replaces its answer',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      control.facilitator.settleAnswer = 'failure';
      control.chain = 'unsettled';
      const answer = await payOnce(ctx);
      checkEqual(answer.status, 402, 'status after a failed settlement');
      checkEqual(control.runs('paid'), 1, 'handler runs');
      check(
        !answer.header('set-cookie'),
        `the 402 carries the handler's Set-Cookie: ${answer.header('set-cookie')}`,
      );
    },
  }),
  defineAudit({
    id: 'ASET-04',
    level: 'MUST',
    profile: 'x402',
    sentence: 'MUST NOT settle when the handler throws',
    needs: 'control',
    uses: ['throwing'],
    async run(ctx) {
      const control = controlOf(ctx);
      const path = ctx.paths.throwing!;
      const answer = await payOnce(ctx, path);
      check(answer.status >= 500, `status after a throwing handler: ${answer.status}`);
      check(!answer.header('payment-response'), 'a throwing handler answer carries PAYMENT-RESPONSE');
      checkEqual(control.runs('throwing'), 1, 'handler runs');
      checkEqual(control.facilitator.calls.settle, 0, 'settle calls');
    },
  }),
  defineAudit({
    id: 'ASET-05',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST release a payment whose handler failed, so the same payload can pay afterwards',
    needs: 'control',
    uses: ['failing', 'throwing'],
    async run(ctx) {
      const control = controlOf(ctx);
      const value = await paymentFor(ctx);
      await sendPayment(ctx, ctx.paths.failing!, value);
      await sendPayment(ctx, ctx.paths.throwing!, value);
      const answer = await sendPayment(ctx, ctx.paths.paid, value);
      checkEqual(
        answer.status,
        200,
        `status of the released payload on the paid route (${answer.text.slice(0, 160)})`,
      );
      checkEqual(control.facilitator.calls.settle, 1, 'settle calls');
    },
  }),
  defineAudit({
    id: 'ASET-06',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer 502 settlement_uncertain, retryable, with retry.instruction retry_exact_payment_payload when settlement times out',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      control.facilitator.settleAnswer = 'timeout';
      const answer = await payOnce(ctx);
      const error = checkErrorBody(answer, 502, 'settlement_uncertain');
      checkEqual(error['retryable'], true, 'error.retryable');
      checkEqual(
        (error['retry'] as { instruction?: unknown } | undefined)?.instruction,
        'retry_exact_payment_payload',
        'error.retry.instruction',
      );
      check(!answer.header('payment-response'), 'an uncertain settlement carries PAYMENT-RESPONSE');
      check(!answer.text.includes('"token"'), 'the handler body was sent before settlement');
    },
  }),
  defineAudit({
    id: 'ASET-07',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a retry of the exact payload with 200 and the stored response once the uncertain settlement turns out to have landed',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      const answer = await retryUncertain(ctx, 'settled');
      checkEqual(answer.status, 200, `status of the retry (${answer.text.slice(0, 160)})`);
      checkEqual(json(answer)['run'], 1, 'run number in the stored response');
      checkEqual(decodeHeader(answer, 'payment-response')['success'], true, 'receipt success');
      checkRanOnce(control);
    },
  }),
  defineAudit({
    id: 'ASET-08',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST settle again, without running the handler again, when the exact payload is retried and the uncertain settlement did not land',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      const answer = await retryUncertain(ctx, 'unsettled');
      checkEqual(answer.status, 200, `status of the retry (${answer.text.slice(0, 160)})`);
      checkEqual(json(answer)['run'], 1, 'run number in the stored response');
      checkRanOnce(control, 2);
    },
  }),
  defineAudit({
    id: 'ASET-09',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a retried settled payload with the stored response byte for byte and the same receipt, without running the handler or settling again (stored-answer replay, the default)',
    needs: 'control',
    replay: 'stored-answer',
    async run(ctx) {
      const control = controlOf(ctx);
      const value = await paymentFor(ctx);
      const first = await sendPayment(ctx, ctx.paths.paid, value);
      const second = await sendPayment(ctx, ctx.paths.paid, value);
      checkEqual(second.status, 200, 'status of the replay');
      checkEqual(second.text, first.text, 'replayed body');
      checkEqual(second.header('payment-response'), first.header('payment-response'), 'replayed receipt');
      checkEqual(second.header('content-type'), first.header('content-type'), 'replayed content type');
      checkRanOnce(control);
    },
  }),
  defineAudit({
    id: 'ASET-10',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST run the handler once for concurrent requests carrying one payment, and answer them all alike (stored-answer replay, the default)',
    needs: 'control',
    replay: 'stored-answer',
    async run(ctx) {
      const control = controlOf(ctx);
      const value = await paymentFor(ctx);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => sendPayment(ctx, ctx.paths.paid, value)),
      );
      checkEqual(answers.map((a) => a.status).join(','), Array(8).fill(200).join(','), 'statuses');
      checkEqual(new Set(answers.map((a) => a.text)).size, 1, 'distinct bodies');
      checkRanOnce(control);
    },
  }),
  defineAudit({
    id: 'ASET-11',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer 503 facilitator_unavailable, without running the handler, when the facilitator cannot verify (fail closed)',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      control.facilitator.verifyAnswer = 'unreachable';
      const answer = await payOnce(ctx);
      checkErrorBody(answer, 503, 'facilitator_unavailable');
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'ASET-14',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      "MUST serve a payment whose settlement the facilitator refused when the chain shows its transfer, with the chain's receipt, and answer its retry alike",
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      control.facilitator.settleAnswer = 'failure';
      control.chain = 'settled';
      const value = await paymentFor(ctx);
      const answer = await sendPayment(ctx, ctx.paths.paid, value);
      checkEqual(
        answer.status,
        200,
        `status of a refused payment the chain shows (${answer.text.slice(0, 160)})`,
      );
      const receipt = decodeHeader(answer, 'payment-response');
      checkEqual(receipt['success'], true, 'receipt success');
      checkEqual(receipt['transaction'], AUDIT_TX, "receipt transaction (the chain's)");
      const again = await sendPayment(ctx, ctx.paths.paid, value);
      checkEqual(again.status, 200, 'status of the retried payload');
      checkEqual(again.text, answer.text, 'body of the retried payload');
      checkRanOnce(control);
    },
  }),
  defineAudit({
    id: 'ASET-15',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer 502 settlement_uncertain, never a refusal, when the facilitator refuses a settlement and the chain cannot tell whether it landed',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      control.facilitator.settleAnswer = 'failure';
      control.chain = 'unknown';
      const answer = await payOnce(ctx);
      checkErrorBody(answer, 502, 'settlement_uncertain');
      check(!answer.text.includes('"token"'), 'the handler body was sent before settlement');
    },
  }),
  defineAudit({
    id: 'ASET-12',
    level: 'SHOULD',
    profile: 'tollbooth',
    sentence: 'SHOULD send the Error body request_id in the X-Request-Id header',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      control.facilitator.settleAnswer = 'timeout';
      const answer = await payOnce(ctx);
      const error = checkErrorBody(answer, 502, 'settlement_uncertain');
      checkEqual(answer.header('x-request-id'), error['request_id'], 'X-Request-Id');
    },
  }),
];
