import { randomBytes } from 'node:crypto';
import { check, checkEqual } from '../audit-failure';
import { balancesOf, checkInvalid, checkNothingMoved, checkNotValid } from './checks';
import { objectOf } from './endpoint';
import { type AuditPayment, emptyKey } from './payments';
import type { FacilitatorAudit, FacilitatorAuditContext } from './types';

const now = () => Math.floor(Date.now() / 1000);

/** One way a payment is wrong, the reason family a facilitator should name, and how to build it. */
export interface Refusal {
  id: string;
  /** Completes "a payment …". */
  what: string;
  /** What an `invalidReason` of this family says (official and specification spellings alike). */
  family: RegExp;
  /** `rule`: an x402 rule every facilitator refuses with `isValid: false` (MUST). */
  kind: 'rule' | 'unsupported';
  make(ctx: FacilitatorAuditContext): Promise<AuditPayment>;
}

/** A network no facilitator lists: a chain id beside the audited one. */
function unlistedNetwork(ctx: FacilitatorAuditContext): string {
  const listed = new Set(ctx.supported?.kinds.map((k) => k.network));
  let id = 990_000_000 + (ctx.chain.config.chainId % 1000);
  while (listed.has(`eip155:${id}`)) id += 1;
  return `eip155:${id}`;
}

export const REFUSALS: readonly Refusal[] = [
  {
    id: 'FVER-10',
    what: 'signed by a key other than the payer',
    family: /signature/i,
    kind: 'rule',
    make: (ctx) => ctx.pay({ signerKey: emptyKey() }),
  },
  {
    id: 'FVER-11',
    what: 'whose authorization pays another address than payTo',
    family: /recipient|pay_?to/i,
    kind: 'rule',
    make: (ctx) => ctx.pay({ to: `0x${randomBytes(20).toString('hex')}` }),
  },
  {
    id: 'FVER-12',
    what: 'whose authorized value is short of the amount',
    family: /value|amount/i,
    kind: 'rule',
    make: (ctx) => ctx.pay({ value: ctx.chain.amount - 1n }),
  },
  {
    id: 'FVER-13',
    what: 'whose authorization has expired (validBefore in the past)',
    family: /valid_?before|expired/i,
    kind: 'rule',
    make: (ctx) => ctx.pay({ validBefore: now() - 60 }),
  },
  {
    id: 'FVER-14',
    what: 'whose authorization is not valid yet (validAfter an hour ahead)',
    family: /valid_?after|not_?yet/i,
    kind: 'rule',
    make: (ctx) => ctx.pay({ validAfter: now() + 3600 }),
  },
  {
    id: 'FVER-15',
    what: 'whose authorization was already used on chain',
    family: /nonce|used|replay/i,
    kind: 'rule',
    async make(ctx) {
      const payment = await ctx.pay();
      await ctx.useOnChain(payment);
      return payment;
    },
  },
  {
    id: 'FVER-16',
    what: 'from a payer without the balance',
    family: /balance|funds/i,
    kind: 'rule',
    make: (ctx) => ctx.pay({ payerKey: emptyKey() }),
  },
  {
    id: 'FVER-20',
    what: 'on a network it does not support',
    family: /network|chain/i,
    kind: 'unsupported',
    make: (ctx) => ctx.pay({ requirements: { network: unlistedNetwork(ctx) } }),
  },
  {
    id: 'FVER-21',
    what: 'in a scheme it does not support',
    family: /scheme/i,
    kind: 'unsupported',
    make: (ctx) => ctx.pay({ requirements: { scheme: 'conformance-unknown' } }),
  },
];

const refusalAudit = (r: Refusal): FacilitatorAudit =>
  r.kind === 'rule'
    ? {
        id: r.id,
        level: 'MUST',
        endpoint: 'verify',
        sentence: `MUST answer /verify of a payment ${r.what} with isValid: false and an invalidReason, below 500, using nothing on chain`,
        async run(ctx) {
          const payment = await r.make(ctx);
          const before = await balancesOf(ctx, payment);
          const answer = await ctx.facilitator.verify(payment.body);
          checkInvalid(answer, 'the refused payment');
          if (r.id !== 'FVER-15') await checkNothingMoved(ctx, payment, before, 'after /verify');
        },
      }
    : {
        id: r.id,
        level: 'MUST',
        endpoint: 'verify',
        sentence: `MUST NOT answer /verify of a payment ${r.what} with isValid: true, and use nothing on chain`,
        async run(ctx) {
          const payment = await r.make(ctx);
          const before = await balancesOf(ctx, payment);
          checkNotValid(await ctx.facilitator.verify(payment.body), 'the unsupported payment');
          await checkNothingMoved(ctx, payment, before, 'after /verify');
        },
      };

const MALFORMED: ReadonlyArray<{ what: string; body: string }> = [
  { what: 'a body that is not JSON', body: 'this is not json' },
  { what: 'a body without paymentPayload and paymentRequirements', body: '{"x402Version":2}' },
];

export const verifyAudits: FacilitatorAudit[] = [
  {
    id: 'FVER-01',
    level: 'MUST',
    endpoint: 'verify',
    sentence: 'MUST answer /verify of a valid payment with 200 and isValid: true',
    async run(ctx) {
      const answer = await ctx.facilitator.verify((await ctx.pay()).body);
      check(answer.status === 200, `/verify answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      const body = objectOf(answer, '/verify');
      checkEqual(body['isValid'], true, `isValid (invalidReason ${JSON.stringify(body['invalidReason'])})`);
    },
  },
  {
    id: 'FVER-02',
    level: 'SHOULD',
    endpoint: 'verify',
    sentence: 'SHOULD name the payer (the authorization’s from) in payer of a /verify answer',
    async run(ctx) {
      const payment = await ctx.pay();
      const body = objectOf(await ctx.facilitator.verify(payment.body), '/verify');
      const payer = body['payer'];
      check(
        typeof payer === 'string' && payer.toLowerCase() === payment.authorization.from.toLowerCase(),
        `payer is ${JSON.stringify(payer)}, the payment is from ${payment.authorization.from}`,
      );
    },
  },
  {
    id: 'FVER-03',
    level: 'MUST',
    endpoint: 'verify',
    sentence: 'MUST NOT move funds or use the authorization when verifying',
    async run(ctx) {
      const payment = await ctx.pay();
      const before = await balancesOf(ctx, payment);
      await ctx.facilitator.verify(payment.body);
      await ctx.facilitator.verify(payment.body);
      await checkNothingMoved(ctx, payment, before, 'after two /verify calls');
    },
  },
  ...REFUSALS.map(refusalAudit),
  {
    id: 'FVER-22',
    level: 'MUST',
    endpoint: 'verify',
    sentence:
      'MUST answer a malformed /verify or /settle body with a 4xx (or isValid: false / success: false), never a 5xx or a success',
    async run(ctx) {
      for (const { what, body } of MALFORMED) {
        for (const name of ['verify', 'settle'] as const) {
          const answer = await ctx.facilitator.post(name, body);
          check(
            answer.status < 500,
            `/${name} of ${what} answered ${answer.status}: ${answer.text.slice(0, 160)}`,
          );
          if (answer.status < 300) {
            const json = answer.json as Record<string, unknown> | undefined;
            const refused = name === 'verify' ? json?.['isValid'] === false : json?.['success'] === false;
            check(refused, `/${name} of ${what} answered ${answer.status}: ${answer.text.slice(0, 160)}`);
          }
        }
      }
    },
  },
  {
    id: 'FVER-23',
    level: 'SHOULD',
    endpoint: 'verify',
    sentence:
      'SHOULD answer /verify of a payment on an unsupported network or scheme with 200, isValid: false and an invalidReason, not an error status',
    async run(ctx) {
      for (const r of REFUSALS.filter((refusal) => refusal.kind === 'unsupported')) {
        checkInvalid(await ctx.facilitator.verify((await r.make(ctx)).body), `a payment ${r.what}`);
      }
    },
  },
  {
    id: 'FVER-24',
    level: 'SHOULD',
    endpoint: 'verify',
    sentence:
      'SHOULD say what is wrong in each invalidReason it gives (signature, recipient, value, validBefore, validAfter, nonce, balance, network, scheme)',
    async run(ctx) {
      const wrong: string[] = [];
      for (const r of REFUSALS) {
        const json = (await ctx.facilitator.verify((await r.make(ctx)).body)).json as
          | { invalidReason?: unknown }
          | undefined;
        const reason = json?.invalidReason;
        // An answer without a reason is judged by FVER-10…16 and FVER-23, not here.
        if (typeof reason === 'string' && reason !== '' && !r.family.test(reason))
          wrong.push(`${r.what}: ${JSON.stringify(reason)}`);
      }
      check(wrong.length === 0, `reasons that do not say what is wrong — ${wrong.join('; ')}`);
    },
  },
];
