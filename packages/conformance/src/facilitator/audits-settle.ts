import type { Hash } from 'viem';
import { check, checkEqual } from '../audit-failure';
import { coversNetwork } from './audits-supported';
import {
  balancesOf,
  checkNothingMoved,
  checkSettled,
  checkTransferredBy,
  checkUsedOnce,
  networkOf,
  TX_HASH,
} from './checks';
import { type FacilitatorAnswer, objectOf } from './endpoint';
import type { AuditPayment } from './payments';
import type { FacilitatorAudit, FacilitatorAuditContext } from './types';

/** Verifies, then settles a fresh valid payment, and proves the settlement on chain. */
async function settleOnce(ctx: FacilitatorAuditContext, payment?: AuditPayment) {
  const paid = payment ?? (await ctx.pay());
  const before = await balancesOf(ctx, paid);
  const verdict = objectOf(await ctx.facilitator.verify(paid.body), '/verify');
  checkEqual(
    verdict['isValid'],
    true,
    `isValid before settling (${JSON.stringify(verdict['invalidReason'])})`,
  );
  const answer = await ctx.facilitator.settle(paid.body);
  const transaction = await checkSettled(ctx, paid, answer, before);
  return { payment: paid, answer, transaction, before };
}

/**
 * Fails when an answer claims success for a transaction that is not the one that used the
 * authorization (`landed`), or reports no transaction for a success.
 */
async function checkHonest(
  ctx: FacilitatorAuditContext,
  payment: AuditPayment,
  answer: FacilitatorAnswer,
  landed: Hash | undefined,
  what: string,
): Promise<void> {
  const body = answer.json as Record<string, unknown> | undefined;
  if (body?.['success'] !== true) return;
  const transaction = body['transaction'];
  check(
    typeof transaction === 'string' && TX_HASH.test(transaction),
    `${what}: success with transaction ${JSON.stringify(transaction)}`,
  );
  if (landed && transaction.toLowerCase() === landed.toLowerCase()) return;
  // A success naming another transaction must be a transfer of its own (and then it charged twice).
  await checkTransferredBy(ctx, payment, transaction as Hash);
}

export const settleAudits: FacilitatorAudit[] = [
  {
    id: 'FSET-01',
    level: 'MUST',
    endpoint: 'settle',
    sentence:
      'MUST settle a verified payment with success: true, its transaction hash and network, in a transaction that transferred exactly the amount from the payer to payTo on chain',
    async run(ctx) {
      await settleOnce(ctx);
    },
  },
  {
    id: 'FSET-02',
    level: 'MUST',
    endpoint: 'settle',
    sentence:
      'MUST NOT transfer again when the same payload is settled a second time, nor claim success for a transaction that did not transfer it',
    async run(ctx) {
      const { payment, transaction } = await settleOnce(ctx);
      const after = await balancesOf(ctx, payment);
      const again = await ctx.facilitator.settle(payment.body);
      await checkHonest(ctx, payment, again, transaction, 'the second /settle');
      await checkUsedOnce(ctx, payment);
      const final = await balancesOf(ctx, payment);
      checkEqual(final.payer, after.payer, 'payer balance after the second /settle');
    },
  },
  {
    id: 'FSET-03',
    level: 'MUST',
    endpoint: 'settle',
    sentence:
      'MUST transfer once when the same payload is settled three times at once, and report that transfer as a success in at least one answer, never another',
    async run(ctx) {
      const payment = await ctx.pay();
      const before = await balancesOf(ctx, payment);
      const answers = await Promise.all([1, 2, 3].map(() => ctx.facilitator.settle(payment.body)));
      await checkUsedOnce(ctx, payment);
      const after = await balancesOf(ctx, payment);
      checkEqual(before.payer - after.payer, BigInt(payment.authorization.value), 'payer balance change');
      const successes = answers.filter((a) => (a.json as { success?: unknown })?.success === true);
      check(
        successes.length > 0,
        `the transfer landed but no answer reports it: ${answers.map((a) => a.text.slice(0, 120)).join(' | ')}`,
      );
      const landed = (successes[0]!.json as { transaction: Hash }).transaction;
      await checkTransferredBy(ctx, payment, landed);
      for (const answer of answers) await checkHonest(ctx, payment, answer, landed, 'a concurrent /settle');
    },
  },
  {
    id: 'FSET-04',
    level: 'MUST',
    endpoint: 'settle',
    sentence:
      'MUST NOT transfer an authorization already used on chain, nor claim success for any transaction but the one that used it',
    async run(ctx) {
      const payment = await ctx.pay();
      await ctx.useOnChain(payment);
      const before = await balancesOf(ctx, payment);
      const answer = await ctx.facilitator.settle(payment.body);
      const body = answer.json as Record<string, unknown> | undefined;
      if (body?.['success'] === true) {
        // Only the transaction that did use it may be named: it is on chain with this authorization.
        await checkTransferredBy(ctx, payment, body['transaction'] as Hash);
      }
      await checkUsedOnce(ctx, payment);
      const after = await balancesOf(ctx, payment);
      checkEqual(after.payer, before.payer, 'payer balance after /settle');
    },
  },
  {
    id: 'FSET-05',
    level: 'MUST',
    endpoint: 'settle',
    sentence:
      'MUST answer /settle of a payment that fails verification with success: false, an errorReason, transaction "" and the network, moving nothing',
    async run(ctx) {
      const payment = await ctx.pay({ value: ctx.chain.amount - 1n });
      const before = await balancesOf(ctx, payment);
      const answer = await ctx.facilitator.settle(payment.body);
      check(answer.status < 500, `/settle answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      const body = objectOf(answer, '/settle');
      checkEqual(body['success'], false, 'success');
      check(
        typeof body['errorReason'] === 'string' && body['errorReason'] !== '',
        `errorReason is ${JSON.stringify(body['errorReason'])}`,
      );
      checkEqual(body['transaction'], '', 'transaction of a failed settlement');
      checkEqual(body['network'], networkOf(payment), 'network');
      await checkNothingMoved(ctx, payment, before, 'after /settle');
    },
  },
  {
    id: 'FSET-06',
    level: 'SHOULD',
    endpoint: 'settle',
    sentence: 'SHOULD name the payer (the authorization’s from) in payer of a /settle answer',
    async run(ctx) {
      const { payment, answer } = await settleOnce(ctx);
      const payer = (answer.json as { payer?: unknown }).payer;
      check(
        typeof payer === 'string' && payer.toLowerCase() === payment.authorization.from.toLowerCase(),
        `payer is ${JSON.stringify(payer)}, the payment is from ${payment.authorization.from}`,
      );
    },
  },
  {
    id: 'FSET-07',
    level: 'SHOULD',
    endpoint: 'settle',
    sentence: 'SHOULD send its settlement transactions from an address /supported lists among its signers',
    async run(ctx) {
      const { payment, transaction } = await settleOnce(ctx);
      const sender = (await checkTransferredBy(ctx, payment, transaction)).toLowerCase();
      const signers = Object.entries(ctx.supported?.signers ?? {})
        .filter(([pattern]) => coversNetwork(pattern, ctx.chain.network))
        .flatMap(([, addresses]) => (Array.isArray(addresses) ? addresses : []))
        .map((a) => String(a).toLowerCase());
      check(
        signers.includes(sender),
        `the settlement came from ${sender}; signers lists ${signers.join(', ') || 'none'}`,
      );
    },
  },
];

export const v1Audits: FacilitatorAudit[] = [
  {
    id: 'FV1-01',
    level: 'MUST',
    endpoint: 'verify',
    sentence:
      'MUST answer /verify of a valid x402 v1 payment with isValid: true when /supported lists exact on the network’s v1 name',
    needs: ['v1'],
    async run(ctx) {
      const answer = await ctx.facilitator.verify((await ctx.payV1()).body);
      check(answer.status === 200, `/verify answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      const body = objectOf(answer, '/verify');
      checkEqual(body['isValid'], true, `isValid (invalidReason ${JSON.stringify(body['invalidReason'])})`);
    },
  },
  {
    id: 'FV1-02',
    level: 'MUST',
    endpoint: 'verify',
    sentence:
      'MUST answer /verify of an x402 v1 payment whose value is short with isValid: false and an invalidReason',
    needs: ['v1'],
    async run(ctx) {
      const payment = await ctx.payV1({ value: ctx.chain.amount - 1n });
      const answer = await ctx.facilitator.verify(payment.body);
      check(answer.status < 500, `/verify answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      const body = objectOf(answer, '/verify');
      checkEqual(body['isValid'], false, 'isValid');
      check(typeof body['invalidReason'] === 'string' && body['invalidReason'] !== '', 'no invalidReason');
    },
  },
  {
    id: 'FV1-03',
    level: 'MUST',
    endpoint: 'settle',
    sentence:
      'MUST settle a valid x402 v1 payment with success: true in a transaction that transferred exactly the amount on chain',
    needs: ['v1'],
    async run(ctx) {
      await settleOnce(ctx, await ctx.payV1());
    },
  },
];
