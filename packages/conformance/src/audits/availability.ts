import { check, checkEqual } from '../audit-failure';
import { send } from '../http';
import { checkErrorBody, checkNotRun, defineAudit, pathOf, paymentFor, sendPayment } from './helpers';

export const availabilityAudits = [
  defineAudit({
    id: 'AAVL-01',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a paused route with 503 resource_paused and Retry-After, without a payment challenge',
    needs: 'server',
    uses: ['paused'],
    async run(ctx) {
      const path = pathOf(ctx, 'paused');
      const answer = await send(ctx, path);
      checkErrorBody(answer, 503, 'resource_paused');
      check(
        /^\d+$/.test(answer.header('retry-after') ?? ''),
        `Retry-After is ${answer.header('retry-after')}`,
      );
      check(!answer.header('payment-required'), 'a paused route sends PAYMENT-REQUIRED');
      if (ctx.control) {
        // Not even a payment reaches the facilitator or the handler.
        const value = await paymentFor(ctx);
        checkErrorBody(await sendPayment(ctx, path, value), 503, 'resource_paused');
        checkEqual(ctx.control.facilitator.calls.verify, 0, 'verify calls');
        checkNotRun(ctx, 'paused');
      }
    },
  }),
  defineAudit({
    id: 'AAVL-02',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST answer a retired route with 410 resource_retired, without a payment challenge',
    needs: 'server',
    uses: ['retired'],
    async run(ctx) {
      const answer = await send(ctx, pathOf(ctx, 'retired'));
      checkErrorBody(answer, 410, 'resource_retired');
      checkEqual(answer.header('retry-after'), undefined, 'Retry-After of a retired route');
      check(!answer.header('payment-required'), 'a retired route sends PAYMENT-REQUIRED');
      checkNotRun(ctx, 'retired');
    },
  }),
  defineAudit({
    id: 'AAVL-03',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a non-canonical request (a query string) to a canonical route with 400 non_canonical_request, and challenge the canonical URL',
    needs: 'server',
    uses: ['canonical'],
    async run(ctx) {
      const path = pathOf(ctx, 'canonical');
      const error = checkErrorBody(await send(ctx, `${path}?fresh=1`), 400, 'non_canonical_request');
      checkEqual(error['retryable'], false, 'error.retryable');
      checkEqual((await send(ctx, path)).status, 402, 'status of the canonical URL');
      checkNotRun(ctx, 'canonical');
    },
  }),
];
