// Every resource-server audit, shown failing against a server broken in the one way it checks:
// proof that no audit passes whatever the target does. (test/audits.test.ts shows every audit
// passing on Tollbooth's adapters.)
import { AUDITS, type AuditFixture, runAudit } from '@tollbooth/conformance';
import { createMemoryLedgerStore, encodeHeader } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import {
  type Breakage,
  type OutgoingAnswer,
  startBroken,
  startNaivePathGate,
} from './support/broken-servers';

const decode = (value: string) =>
  JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Record<string, unknown>;

/**
 * Renames every error code of a payment refusal (a 402's body and challenge, a 400's Error body and
 * challenge): a server with another vocabulary.
 */
function otherVocabulary(answer: OutgoingAnswer): void {
  if (answer.status !== 402 && answer.status !== 400) return;
  const challenge = answer.header('payment-required');
  if (challenge)
    answer.set('payment-required', encodeHeader({ ...decode(challenge), error: 'payment_error' }));
  try {
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    const error =
      answer.status === 402 ? 'payment_error' : { ...(body['error'] as object), code: 'payment_error' };
    answer.body = JSON.stringify({ ...body, error });
  } catch {
    // Not JSON: nothing to rename.
  }
}

/** Answers a malformed payment with 402 and the challenge as the body, as the official middleware 2.27 does. */
function malformedAs402(answer: OutgoingAnswer): void {
  const challenge = answer.header('payment-required');
  if (answer.status !== 400 || !challenge) return;
  answer.status = 402;
  answer.body = JSON.stringify(decode(challenge));
}

const ungated: Breakage = { ungated: true };
const vocabulary: Breakage = { rewrite: otherVocabulary };
const twoInstances: Breakage = { twoInstances: true };
const storedAnswers: Breakage = { gate: (options) => ({ ...options, replay: 'stored-answer' }) };
const ignoresXPayment: Breakage = {
  before: (app) =>
    app.use((req, _res, next) => {
      delete req.headers['x-payment'];
      next();
    }),
};
const strictPadding: Breakage = {
  before: (app) =>
    app.use((req, res, next) => {
      const value = req.get('payment-signature');
      if (value && value.length % 4 !== 0) res.status(400).json({ error: 'bad base64' });
      else next();
    }),
};
const rewrite = (change: (answer: OutgoingAnswer) => void): Breakage => ({ rewrite: change });
const withoutHeader = (name: string, status?: number) =>
  rewrite((a) => {
    if (status === undefined || a.status === status) a.remove(name);
  });
const freeRouteCharged: Breakage = {
  gate: (options) => ({
    ...options,
    routes: { ...options.routes, 'GET /api/free': options.routes['GET /api/paid']! },
  }),
};

/** A gate that takes the facilitator's word on a settle refusal: no chain reader to judge it. */
const noChainReader: Breakage = {
  gate: (options) => ({
    ...options,
    schemes: options.schemes.map((scheme) => ({ ...scheme, hasChainReader: () => false })),
  }),
};

const BROKEN: Record<string, { what: string; breakage: Breakage | 'naive-paths' }> = {
  'A402-01': { what: 'has no gate', breakage: ungated },
  'A402-02': {
    what: 'sends {} as the 402 body',
    breakage: rewrite((a) => {
      if (a.status === 402) a.body = '{}';
    }),
  },
  'A402-03': {
    what: 'indents the JSON of PAYMENT-REQUIRED',
    breakage: rewrite((a) => {
      const value = a.header('payment-required');
      if (value)
        a.set('payment-required', Buffer.from(JSON.stringify(decode(value), null, 2)).toString('base64'));
    }),
  },
  'A402-04': {
    what: 'challenges with x402Version 1',
    breakage: rewrite((a) => {
      const value = a.header('payment-required');
      if (value) a.set('payment-required', encodeHeader({ ...decode(value), x402Version: 1 }));
    }),
  },
  'A402-05': {
    what: 'serves HEAD unpaid',
    breakage: { before: (app) => app.head('/api/paid', (_req, res) => void res.status(200).end()) },
  },
  'A402-06': { what: 'drops Cache-Control', breakage: withoutHeader('cache-control') },
  'A402-07': {
    what: 'serves a request with a query string unpaid',
    breakage: {
      before: (app, fixture) =>
        app.use(async (req, res, next) => {
          if (Object.keys(req.query as object).length === 0) return next();
          res.json((await fixture.handle('paid', undefined)).body);
        }),
    },
  },
  'ADEC-01': { what: 'uses another error vocabulary', breakage: vocabulary },
  'ADEC-02': { what: 'uses another error vocabulary', breakage: vocabulary },
  'ADEC-03': { what: 'refuses unpadded base64 with 400', breakage: strictPadding },
  'ADEC-04': { what: 'uses another error vocabulary', breakage: vocabulary },
  'ADEC-05': { what: 'uses another error vocabulary', breakage: vocabulary },
  'ADEC-06': {
    what: 'has no gate and takes 128 KiB heads',
    breakage: { ungated: true, maxHeaderSize: 128 * 1024 },
  },
  'ADEC-07': {
    what: 'caps payment headers at 16 KiB',
    breakage: { gate: (options) => ({ ...options, maxPaymentHeaderBytes: 16_384 }) },
  },
  'ADEC-08': { what: 'ignores X-PAYMENT', breakage: ignoresXPayment },
  'ADEC-09': { what: 'uses another error vocabulary', breakage: vocabulary },
  'ADEC-10': { what: 'has no gate', breakage: ungated },
  'ADEC-11': { what: 'has no gate', breakage: ungated },
  'ADEC-12': { what: 'has no gate', breakage: ungated },
  'ADEC-13': { what: 'has no gate', breakage: ungated },
  'ADEC-14': { what: 'has no gate', breakage: ungated },
  'ADEC-15': { what: 'refuses unpadded base64 with 400', breakage: strictPadding },
  'ADEC-16': { what: 'answers a malformed payment with 402', breakage: rewrite(malformedAs402) },
  'ADEC-17': { what: 'answers a malformed payment with 402', breakage: rewrite(malformedAs402) },
  'ADEC-18': { what: 'ignores X-PAYMENT', breakage: ignoresXPayment },
  ...Object.fromEntries(
    Array.from({ length: 16 }, (_, i) => [
      `AREJ-${String(i + 1).padStart(2, '0')}`,
      { what: 'uses another error vocabulary', breakage: vocabulary },
    ]),
  ),
  'ASET-01': { what: 'drops PAYMENT-RESPONSE', breakage: withoutHeader('payment-response', 200) },
  'ASET-02': { what: 'does not give the handler the payment', breakage: { noPayer: true } },
  'ASET-03': { what: 'settles whatever the handler answered', breakage: { settlesRegardless: true } },
  'ASET-04': { what: 'settles whatever the handler answered', breakage: { settlesRegardless: true } },
  'ASET-05': {
    what: 'never removes a claim from its ledger',
    breakage: {
      gate: (options) => ({ ...options, ledger: createForgetfulRemovals(), inFlightWaitMs: 200 }),
    },
  },
  'ASET-06': {
    what: 'answers an uncertain settlement with a bare 500',
    breakage: rewrite((a) => {
      if (a.status === 502) {
        a.status = 500;
        a.body = '{"error":"internal"}';
      }
    }),
  },
  'ASET-07': { what: 'runs two instances without a shared ledger', breakage: twoInstances },
  'ASET-08': { what: 'runs two instances without a shared ledger', breakage: twoInstances },
  'ASET-09': { what: 'runs two instances without a shared ledger', breakage: twoInstances },
  'ASET-10': { what: 'runs two instances without a shared ledger', breakage: twoInstances },
  'ASET-11': {
    what: 'fails open when the facilitator cannot verify',
    breakage: {
      gate: (options) => ({
        ...options,
        facilitator: {
          ...options.facilitator,
          verify: (payload, requirements, call) =>
            options.facilitator.verify(payload, requirements, call).catch(() => ({ isValid: true })),
          settle: (payload, requirements, call) => options.facilitator.settle(payload, requirements, call),
          supported: (call) => options.facilitator.supported(call),
        },
      }),
    },
  },
  'ASET-12': { what: 'drops X-Request-Id', breakage: withoutHeader('x-request-id') },
  'ASET-16': { what: 'replays the stored answer although audited as strict', breakage: storedAnswers },
  'ASET-17': { what: 'replays the stored answer although audited as strict', breakage: storedAnswers },
  'ASET-13': {
    what: 'keeps the handler’s Set-Cookie on a failed settlement',
    breakage: rewrite((a) => a.status === 402 && a.set('set-cookie', 'audit-handler=1; Path=/')),
  },
  'ASET-14': { what: 'takes the facilitator’s refusal without asking the chain', breakage: noChainReader },
  'ASET-15': { what: 'takes the facilitator’s refusal without asking the chain', breakage: noChainReader },
  'AAVL-01': { what: 'has no gate', breakage: ungated },
  'AAVL-02': { what: 'has no gate', breakage: ungated },
  'AAVL-03': { what: 'has no gate', breakage: ungated },
  'ACORS-01': {
    what: 'drops Access-Control-Expose-Headers',
    breakage: withoutHeader('access-control-expose-headers'),
  },
  'ACORS-02': {
    what: 'drops Access-Control-Expose-Headers',
    breakage: withoutHeader('access-control-expose-headers'),
  },
  'ACORS-03': {
    what: 'challenges preflights',
    breakage: {
      before: (app) =>
        app.options('/api/paid', (_req, res) => {
          res
            .status(402)
            .set('payment-required', encodeHeader({ x402Version: 2 }))
            .end();
        }),
    },
  },
  'ACORS-04': {
    what: 'replaces the expose list middleware set before it',
    breakage: rewrite((a) => a.status === 402 && a.set('access-control-expose-headers', 'PAYMENT-REQUIRED')),
  },
  'APASS-01': { what: 'charges for the free route', breakage: freeRouteCharged },
  'APASS-02': { what: 'charges for the free route', breakage: freeRouteCharged },
  ...Object.fromEntries(
    Array.from({ length: 8 }, (_, i) => [
      `APATH-${String(i + 1).padStart(2, '0')}`,
      { what: 'gates the raw request target only', breakage: 'naive-paths' as const },
    ]),
  ),
};

/** A ledger store that never removes anything (a released claim stays). */
function createForgetfulRemovals() {
  return { ...createMemoryLedgerStore(), remove: async () => true };
}

describe('each resource-server audit against a server broken in the way it checks', () => {
  it('has a broken server for every audit', () => {
    expect(Object.keys(BROKEN).sort()).toEqual(AUDITS.map((a) => a.id).sort());
  });

  it.each(AUDITS.map((audit) => [audit.id, BROKEN[audit.id]?.what ?? '?', audit] as const))(
    '%s fails against a server that %s',
    async (id, _what, audit) => {
      const { breakage } = BROKEN[id]!;
      const start =
        breakage === 'naive-paths'
          ? (fixture: AuditFixture) => startNaivePathGate(fixture)
          : startBroken(breakage);
      const result = await runAudit(audit, { start }, { replay: audit.replay ?? 'stored-answer' });
      expect(result.status, result.message).toBe('failed');
    },
  );
});
