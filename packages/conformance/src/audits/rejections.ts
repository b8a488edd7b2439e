import type { PaymentRequired } from '@tollbooth/core';
import { check, checkEqual } from '../audit-failure';
import { challengeOf, decodeHeader } from '../http';
import type { Audit, AuditContext, AuditControl } from '../types';
import {
  checkNotRun,
  checkRejected,
  controlOf,
  defineAudit,
  mutatePayment,
  paymentFor,
  payOnce,
  sendPayment,
} from './helpers';

interface Rejection {
  id: string;
  /** What is wrong with the payment, as it reads in the sentence. */
  what: string;
  code: string;
  /** Builds the defective payment (and scripts the doubles). */
  make(control: AuditControl, challenge: PaymentRequired): string;
}

const now = () => Math.floor(Date.now() / 1000);
const first = (challenge: PaymentRequired) => challenge.accepts[0]!;

const REJECTIONS: Rejection[] = [
  {
    id: 'AREJ-01',
    what: 'for another scheme',
    code: 'payment_scheme_mismatch',
    make: (c, ch) => c.pay(ch, { accepted: { scheme: 'upto' } }),
  },
  {
    id: 'AREJ-02',
    what: 'for another network',
    code: 'payment_network_mismatch',
    make: (c, ch) => c.pay(ch, { accepted: { network: 'eip155:1' } }),
  },
  {
    id: 'AREJ-03',
    what: 'in another asset',
    code: 'payment_asset_mismatch',
    make: (c, ch) => c.pay(ch, { accepted: { asset: `0x${'ee'.repeat(20)}` } }),
  },
  {
    id: 'AREJ-04',
    what: 'whose accepted amount differs from the price',
    code: 'payment_amount_mismatch',
    make: (c, ch) => c.pay(ch, { accepted: { amount: String(BigInt(first(ch).amount) - 1n) } }),
  },
  {
    id: 'AREJ-05',
    what: 'whose accepted payTo differs in case only',
    code: 'payment_recipient_mismatch',
    make: (c, ch) => c.pay(ch, { accepted: { payTo: first(ch).payTo.toLowerCase() } }),
  },
  {
    id: 'AREJ-06',
    what: 'whose accepted extra differs from the route',
    code: 'payment_requirements_mismatch',
    make: (c, ch) => c.pay(ch, { accepted: { extra: { ...first(ch).extra, name: 'Counterfeit' } } }),
  },
  {
    id: 'AREJ-07',
    what: 'with a signature that does not verify',
    code: 'payment_signature_invalid',
    make: (c, ch) => c.pay(ch, { signature: `0x${'00'.repeat(65)}` }),
  },
  {
    id: 'AREJ-08',
    what: 'whose authorization is not valid yet',
    code: 'payment_not_yet_valid',
    make: (c, ch) => c.pay(ch, { authorization: { validAfter: String(now() + 3600) }, resign: true }),
  },
  {
    id: 'AREJ-09',
    what: 'whose authorization has expired',
    code: 'payment_expired',
    make: (c, ch) => c.pay(ch, { authorization: { validBefore: String(now() - 60) }, resign: true }),
  },
  {
    id: 'AREJ-10',
    what: 'whose signed value differs from the price',
    code: 'payment_amount_mismatch',
    make: (c, ch) => c.pay(ch, { authorization: { value: '1' }, resign: true }),
  },
  {
    id: 'AREJ-11',
    what: 'whose signed recipient differs from payTo',
    code: 'payment_recipient_mismatch',
    make: (c, ch) => c.pay(ch, { authorization: { to: `0x${'cd'.repeat(20)}` }, resign: true }),
  },
  {
    id: 'AREJ-12',
    what: 'the scheme cannot read',
    code: 'payment_invalid',
    make: (c, ch) =>
      mutatePayment(c.pay(ch), (payment) => {
        payment['payload'] = { signature: '0x00' };
      }),
  },
  {
    id: 'AREJ-13',
    what: 'the facilitator declares invalid',
    code: 'payment_verification_failed',
    make(c, ch) {
      c.facilitator.verifyAnswer = 'invalid';
      return c.pay(ch);
    },
  },
  {
    id: 'AREJ-14',
    what: 'from a payer without the balance',
    code: 'payment_insufficient_funds',
    make(c, ch) {
      c.facilitator.verifyAnswer = 'insufficient';
      return c.pay(ch);
    },
  },
];

const rejectionAudit = (r: Rejection): Audit =>
  defineAudit({
    id: r.id,
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer a payment ${r.what} with 402, a fresh challenge and error ${r.code}`,
    needs: 'control',
    async run(ctx: AuditContext) {
      const control = controlOf(ctx);
      const value = r.make(control, await challengeOf(ctx, ctx.paths.paid));
      const answer = await sendPayment(ctx, ctx.paths.paid, value);
      checkRejected(answer, r.code);
      checkNotRun(ctx);
      checkEqual(control.facilitator.calls.settle, 0, 'settle calls');
      check(!answer.header('payment-response'), 'a rejected payment carries PAYMENT-RESPONSE');
    },
  });

export const rejectionAudits: Audit[] = [
  ...REJECTIONS.map(rejectionAudit),
  defineAudit({
    id: 'AREJ-15',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a settlement the facilitator refuses, with nothing moved on chain, with 402 payment_settlement_failed and a failed PAYMENT-RESPONSE, withholding the handler body',
    needs: 'control',
    async run(ctx) {
      const control = controlOf(ctx);
      control.facilitator.settleAnswer = 'failure';
      control.chain = 'unsettled';
      const answer = await payOnce(ctx);
      checkRejected(answer, 'payment_settlement_failed');
      checkEqual(decodeHeader(answer, 'payment-response')['success'], false, 'PAYMENT-RESPONSE success');
      check(!answer.text.includes('"token"'), 'the handler body was sent for an unsettled payment');
    },
  }),
  defineAudit({
    id: 'AREJ-16',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer a payment settled for one resource and sent to another with 402 payment_already_used',
    needs: 'control',
    uses: ['other'],
    async run(ctx) {
      const control = controlOf(ctx);
      const value = await paymentFor(ctx);
      checkEqual((await sendPayment(ctx, ctx.paths.paid, value)).status, 200, 'status of the first use');
      const other = ctx.paths.other!;
      checkRejected(await sendPayment(ctx, other, value), 'payment_already_used');
      checkNotRun(ctx, 'other');
      checkEqual(control.facilitator.calls.settle, 1, 'settle calls');
    },
  }),
];
