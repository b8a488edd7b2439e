import { check, checkEqual } from '../audit-failure';
import { decodeHeader, json, send } from '../http';
import { checkNotRun, defineAudit } from './helpers';

const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;
const ATOMIC = /^\d+$/;

export const challengeAudits = [
  defineAudit({
    id: 'A402-01',
    level: 'MUST',
    profile: 'x402',
    sentence:
      'MUST answer 402 with PAYMENT-REQUIRED when no payment header is sent, without running the handler',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, ctx.paths.paid);
      checkEqual(answer.status, 402, 'status of an unpaid request');
      decodeHeader(answer, 'payment-required');
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'A402-02',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST send the same PaymentRequired object as the JSON body of the 402 as in PAYMENT-REQUIRED; the header MAY carry lighter forms of the same extensions',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, ctx.paths.paid);
      // An extension's header form may leave out what a response head cannot hold (a body schema).
      const { extensions: headerExtensions, ...header } = decodeHeader(answer, 'payment-required');
      const { extensions: bodyExtensions, ...body } = json(answer);
      checkEqual(JSON.stringify(body), JSON.stringify(header), 'the 402 body against the header');
      checkEqual(
        Object.keys((bodyExtensions ?? {}) as object).join(', '),
        Object.keys((headerExtensions ?? {}) as object).join(', '),
        'the extensions of the 402 body against those of the header',
      );
      check(
        answer.header('content-type')?.startsWith('application/json'),
        'the 402 body is not application/json',
      );
    },
  }),
  defineAudit({
    id: 'A402-03',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST encode PAYMENT-REQUIRED as standard base64 of compact UTF-8 JSON',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, ctx.paths.paid);
      const object = decodeHeader(answer, 'payment-required');
      const compact = Buffer.from(JSON.stringify(object), 'utf8').toString('base64');
      checkEqual(
        answer.header('payment-required'),
        compact,
        'PAYMENT-REQUIRED against base64 of compact JSON',
      );
    },
  }),
  defineAudit({
    id: 'A402-04',
    level: 'MUST',
    profile: 'x402',
    sentence:
      'MUST challenge with x402Version 2, the resource URL and requirements (scheme, CAIP-2 network, atomic amount, asset, payTo, maxTimeoutSeconds, and for exact on EVM the token’s EIP-712 name and version in extra)',
    needs: 'server',
    async run(ctx) {
      const challenge = decodeHeader(await send(ctx, ctx.paths.paid), 'payment-required');
      checkEqual(challenge['x402Version'], 2, 'x402Version');
      const resource = challenge['resource'] as { url?: unknown } | undefined;
      check(typeof resource?.url === 'string', 'resource.url is missing');
      check(
        new URL(resource.url).pathname.toLowerCase() === ctx.paths.paid.toLowerCase(),
        `resource.url ${resource.url} is not the paid path`,
      );
      const accepts = challenge['accepts'];
      check(Array.isArray(accepts) && accepts.length > 0, 'accepts is empty');
      for (const [i, r] of (accepts as Record<string, unknown>[]).entries()) {
        check(typeof r['scheme'] === 'string', `accepts[${i}].scheme is missing`);
        check(
          typeof r['network'] === 'string' && CAIP2.test(r['network']),
          `accepts[${i}].network is not CAIP-2`,
        );
        check(
          typeof r['amount'] === 'string' && ATOMIC.test(r['amount']),
          `accepts[${i}].amount is not atomic`,
        );
        check(
          typeof r['asset'] === 'string' && typeof r['payTo'] === 'string',
          `accepts[${i}] lacks asset or payTo`,
        );
        check(Number.isInteger(r['maxTimeoutSeconds']), `accepts[${i}].maxTimeoutSeconds is not an integer`);
        const extra = r['extra'] as Record<string, unknown> | null | undefined;
        check(
          extra === undefined || extra === null || (typeof extra === 'object' && !Array.isArray(extra)),
          `accepts[${i}].extra is not an object`,
        );
        // The client signs an EIP-712 message whose domain it can only take from here.
        if (r['scheme'] === 'exact' && String(r['network']).startsWith('eip155:')) {
          check(
            typeof extra?.['name'] === 'string' && typeof extra['version'] === 'string',
            `accepts[${i}].extra lacks the token's EIP-712 name and version: ${JSON.stringify(extra)}`,
          );
        }
      }
    },
  }),
  defineAudit({
    id: 'A402-05',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST gate HEAD requests to a paid route like GET',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, ctx.paths.paid, { method: 'HEAD' });
      checkEqual(answer.status, 402, 'status of an unpaid HEAD');
      check(answer.header('payment-required'), 'no PAYMENT-REQUIRED on the HEAD answer');
      checkNotRun(ctx);
    },
  }),
  defineAudit({
    id: 'A402-06',
    level: 'SHOULD',
    profile: 'tollbooth',
    sentence: 'SHOULD mark challenges Cache-Control: no-store',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, ctx.paths.paid);
      check(
        answer.header('cache-control')?.includes('no-store'),
        `Cache-Control is ${answer.header('cache-control')}`,
      );
    },
  }),
  defineAudit({
    id: 'A402-07',
    level: 'MUST',
    profile: 'x402',
    sentence:
      'MUST NOT serve a paid route unpaid when the request carries a query string (a 402 challenge, or a 4xx refusal such as a canonical route’s)',
    needs: 'server',
    async run(ctx) {
      const answer = await send(ctx, `${ctx.paths.paid}?audit=1`);
      check(
        answer.status >= 400 && answer.status < 500,
        `an unpaid request with a query string answered ${answer.status}, expected 402 or another 4xx`,
      );
      if (answer.status === 402) decodeHeader(answer, 'payment-required');
      checkNotRun(ctx);
    },
  }),
];
