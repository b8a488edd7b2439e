import { check, checkEqual } from '../audit-failure';
import { json } from '../http';
import { checkRanOnce, checkRejected, controlOf, defineAudit, paymentFor, sendPayment } from './helpers';

/** Audits of a server with strict replay (`replay: 'strict'`, docs/ledger.md#replay-a-stance). */
export const replayAudits = [
  defineAudit({
    id: 'ASET-16',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST refuse a retried settled payload with 402 payment_already_used and a fresh challenge, without running the handler or settling again (strict replay)',
    needs: 'control',
    replay: 'strict',
    async run(ctx) {
      const control = controlOf(ctx);
      const value = await paymentFor(ctx);
      const first = await sendPayment(ctx, ctx.paths.paid, value);
      checkEqual(first.status, 200, `status of the payment (${first.text.slice(0, 160)})`);
      for (const attempt of [1, 2]) {
        const again = await sendPayment(ctx, ctx.paths.paid, value);
        check(again.status === 402, `retry ${attempt} answered ${again.status}: ${again.text.slice(0, 160)}`);
        checkRejected(again, 'payment_already_used');
      }
      checkRanOnce(control);
    },
  }),
  defineAudit({
    id: 'ASET-17',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST run the handler once for concurrent requests carrying one payment, answer one with 200 and refuse the others with 402 payment_already_used or 409 payment_in_progress (strict replay)',
    needs: 'control',
    replay: 'strict',
    async run(ctx) {
      const control = controlOf(ctx);
      const value = await paymentFor(ctx);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => sendPayment(ctx, ctx.paths.paid, value)),
      );
      const verdicts = answers.map((a) => {
        if (a.status === 200) return '200';
        const body = json(a);
        const code =
          typeof body['error'] === 'string' ? body['error'] : (body['error'] as { code?: string })?.code;
        return `${a.status} ${code}`;
      });
      checkEqual(verdicts.filter((v) => v === '200').length, 1, `paid answers among ${verdicts.join(', ')}`);
      for (const verdict of verdicts.filter((v) => v !== '200'))
        check(
          verdict === '402 payment_already_used' || verdict === '409 payment_in_progress',
          `a duplicate answered ${verdict}`,
        );
      checkRanOnce(control);
    },
  }),
];
