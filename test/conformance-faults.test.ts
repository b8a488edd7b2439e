// GitHub issue 22, part 3: the fault audits. A server whose facilitator URL points at the kit's
// fault proxy (issue 23's, from @tollbooth/facilitator) is paid once per fault, then the exact
// payload is retried with the facilitator healthy; the chain says what the payer was charged.
// A Tollbooth server with a chain reader keeps every rule; each audit fails against a server broken
// in the way it checks; the official @x402/express keeps the x402 one.
import {
  type AuditResult,
  FAULT_AUDITS,
  type FaultAudit,
  type FaultKit,
  type ReplayMode,
  runFaultAudits,
  startFaultKit,
} from '@tollbooth/conformance';
import { createHttpFacilitatorClient, type FacilitatorClient } from '@tollbooth/core';
import { createExactEvmScheme } from '@tollbooth/evm';
import { tollbooth } from '@tollbooth/express';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme as OfficialExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, listen } from './support/interop-harness';

let kit: FaultKit;
beforeAll(async () => {
  kit = await startFaultKit({ slowSupportedMs: 2_000 });
});
afterAll(async () => {
  await kit?.stop();
});

interface ServerFlaws {
  /** No chain reader: the gate cannot reconcile nor confirm on chain. */
  noChainReader?: boolean;
  /** Answers a verify it could not get as valid (fails open). */
  failsOpen?: boolean;
  /** Asks /supported before every verify, giving up after 1 s. */
  supportedPerRequest?: boolean;
  /** Drops PAYMENT-RESPONSE from what it sends. */
  dropsReceipt?: boolean;
  /** Takes a settle call that failed (no answer it can read) for the facilitator's refusal. */
  settleFailureIsRefusal?: boolean;
  /** Takes a facilitator's refusal at /settle for an unknown outcome (502, settled on the retry). */
  refusalIsUnknown?: boolean;
  /** The gate's replay mode (not a flaw in itself: one when the server is audited in the other). */
  replay?: ReplayMode;
  /** Asks /verify instead of verifying locally with its chain reader (not a flaw: /verify faults then play). */
  verifyBeforeSettle?: boolean;
}

/** A Tollbooth-Express server paid on the kit's chain through the fault proxy, with the given flaws. */
async function startServer(flaws: ServerFlaws = {}): Promise<Listening> {
  const { devnet } = kit.devnet;
  const http = createHttpFacilitatorClient({
    url: kit.facilitatorUrl,
    timeoutMs: 1_000,
    settleTimeoutMs: 2_000,
  });
  const facilitator: FacilitatorClient = {
    ...http,
    async verify(payload, requirements, options) {
      if (flaws.supportedPerRequest)
        await createHttpFacilitatorClient({ url: kit.facilitatorUrl, timeoutMs: 1_000 }).supported();
      if (!flaws.failsOpen) return http.verify(payload, requirements, options);
      return http.verify(payload, requirements, options).catch(() => ({ isValid: true }));
    },
    settle(payload, requirements, options) {
      if (flaws.refusalIsUnknown)
        return http.settle(payload, requirements, options).then((receipt) => {
          if (!receipt.success) throw new Error(`settle answered ${receipt.errorReason}`);
          return receipt;
        });
      if (!flaws.settleFailureIsRefusal) return http.settle(payload, requirements, options);
      return http.settle(payload, requirements, options).catch(() => ({
        success: false,
        errorReason: 'unexpected_settle_error',
        transaction: '',
        network: requirements.network,
      }));
    },
    supported: (options) => http.supported(options),
  };
  const app = express();
  if (flaws.dropsReceipt) {
    app.use((_req, res, next) => {
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
      res.writeHead = ((...args: unknown[]) => {
        res.removeHeader('payment-response');
        return writeHead(...args);
      }) as typeof res.writeHead;
      next();
    });
  }
  app.use(
    tollbooth({
      routes: {
        'GET /paid': {
          accepts: {
            network: `eip155:${devnet.chainId}`,
            payTo: devnet.accounts.payTo.address,
            price: {
              amount: '1000',
              asset: devnet.token.address,
              extra: { name: devnet.token.name, version: devnet.token.version },
            },
          },
        },
      },
      schemes: [createExactEvmScheme(flaws.noChainReader ? {} : { publicClient: devnet.publicClient })],
      facilitator,
      replay: flaws.replay ?? 'stored-answer',
      verifyBeforeSettle: flaws.verifyBeforeSettle === true,
    }),
  );
  app.get('/paid', (_req, res) => void res.json({ paid: true }));
  return listen(app);
}

async function audit(
  server: Listening,
  audits: readonly FaultAudit[] = FAULT_AUDITS,
  replay: ReplayMode = 'stored-answer',
): Promise<AuditResult[]> {
  return runFaultAudits(
    { url: server.url, paidPath: '/paid' },
    {
      chain: { ...kit.chain, unknownTransactionWaitMs: 1_000 },
      faults: kit.proxy,
      audits,
      replay,
      recoveryMs: 2_500,
      requestTimeoutMs: 15_000,
    },
  );
}

/** The audits whose fault plays on /verify. */
const VERIFY_FAULTS = FAULT_AUDITS.filter(
  (a) => a.fault.mode === 'verify-timeout' || a.fault.operations?.join() === 'verify',
).map((a) => a.id);

it('a Tollbooth server with a chain reader keeps every fault rule, charging each payer exactly once', async () => {
  const server = await startServer();
  try {
    const results = await audit(server);
    // It verifies locally (its chain reader reads balance and authorization state), so it never
    // meets the /verify faults: each of those payments is still served and charged once.
    expect(VERIFY_FAULTS).toEqual(['AFLT-02', 'AFLT-08', 'AFLT-10']);
    expect(results.filter((r) => r.status !== 'passed').map((r) => `${r.id} ${r.status}`)).toEqual([
      ...VERIFY_FAULTS.map((id) => `${id} skipped`),
      'AFLT-16 skipped',
    ]);
    for (const result of results.filter((r) => VERIFY_FAULTS.includes(r.id)))
      expect(result.message).toMatch(/never met the fault \(no \/verify call .*charged once/);
    expect(results.map((r) => r.id)).toEqual(FAULT_AUDITS.map((a) => a.id));
  } finally {
    await server.close();
  }
});

it('with verifyBeforeSettle it asks /verify, meets the /verify faults and keeps their rules, and the settle refusal rule', async () => {
  const server = await startServer({ verifyBeforeSettle: true });
  try {
    const results = await audit(
      server,
      FAULT_AUDITS.filter((a) => [...VERIFY_FAULTS, 'AFLT-17'].includes(a.id)),
    );
    expect(results.map((r) => `${r.id} ${r.status} ${r.message ?? ''}`.trim())).toEqual(
      [...VERIFY_FAULTS, 'AFLT-17'].map((id) => `${id} passed`),
    );
  } finally {
    await server.close();
  }
});

it('a Tollbooth server with strict replay keeps its replay rule and still serves a payment whose settle answer was lost', async () => {
  const server = await startServer({ replay: 'strict' });
  try {
    const results = await audit(
      server,
      FAULT_AUDITS.filter((a) => ['AFLT-03', 'AFLT-15', 'AFLT-16'].includes(a.id)),
      'strict',
    );
    expect(results.map((r) => `${r.id} ${r.status} ${r.message ?? ''}`.trim())).toEqual([
      'AFLT-03 passed',
      "AFLT-15 skipped for servers with replay 'stored-answer' (this one is audited as 'strict')",
      'AFLT-16 passed',
    ]);
  } finally {
    await server.close();
  }
});

const BROKEN: Record<string, { what: string; flaws: ServerFlaws }> = {
  'AFLT-01': { what: 'drops PAYMENT-RESPONSE', flaws: { dropsReceipt: true } },
  'AFLT-02': {
    what: 'asks /verify and fails open when it times out',
    flaws: { failsOpen: true, verifyBeforeSettle: true },
  },
  'AFLT-03': { what: 'has no chain reader', flaws: { noChainReader: true } },
  'AFLT-04': { what: 'has no chain reader', flaws: { noChainReader: true } },
  'AFLT-05': { what: 'has no chain reader', flaws: { noChainReader: true } },
  'AFLT-06': { what: 'has no chain reader (takes the facilitator’s word)', flaws: { noChainReader: true } },
  'AFLT-07': {
    what: 'asks /verify, and /supported before every verify, giving up after 1 s',
    flaws: { supportedPerRequest: true, verifyBeforeSettle: true },
  },
  'AFLT-08': {
    what: 'asks /verify and fails open when it answers garbage',
    flaws: { failsOpen: true, verifyBeforeSettle: true },
  },
  // A chain reader would judge such a refusal and serve the payment (AFLT-13): without one it stands.
  'AFLT-09': {
    what: 'takes an unreadable settle answer for a refusal, with no chain reader to judge it',
    flaws: { settleFailureIsRefusal: true, noChainReader: true },
  },
  'AFLT-10': {
    what: 'asks /verify and fails open when its connection resets',
    flaws: { failsOpen: true, verifyBeforeSettle: true },
  },
  'AFLT-11': {
    what: 'takes a reset settle connection for a refusal, with no chain reader to judge it',
    flaws: { settleFailureIsRefusal: true, noChainReader: true },
  },
  'AFLT-12': { what: 'has no chain reader', flaws: { noChainReader: true } },
  'AFLT-13': {
    what: 'has no chain reader (takes the facilitator’s refusal)',
    flaws: { noChainReader: true },
  },
  'AFLT-14': {
    what: 'has no chain reader (takes the facilitator’s refusal)',
    flaws: { noChainReader: true },
  },
  'AFLT-15': { what: 'refuses the payload once answered (strict replay)', flaws: { replay: 'strict' } },
  'AFLT-16': { what: 'replays the stored answer (the default)', flaws: { replay: 'stored-answer' } },
  'AFLT-17': {
    what: 'takes a settle refusal for an unknown outcome, and charges the retried payload',
    flaws: { refusalIsUnknown: true },
  },
};

describe('each fault audit against a server broken in the way it checks', () => {
  it('has a broken server for every audit', () => {
    expect(Object.keys(BROKEN).sort()).toEqual(FAULT_AUDITS.map((a) => a.id).sort());
  });

  it.each(FAULT_AUDITS.map((a) => [a.id, BROKEN[a.id]?.what ?? '?', a] as const))(
    '%s fails against a server that %s',
    async (id, _what, faultAudit) => {
      const server = await startServer(BROKEN[id]!.flaws);
      try {
        const [result] = await audit(server, [faultAudit], faultAudit.replay);
        expect(result?.status, result?.message).toBe('failed');
      } finally {
        await server.close();
      }
    },
  );
});

describe('a server built with the official @x402/express, its facilitator behind the proxy', () => {
  let official: Listening;
  beforeAll(async () => {
    const { devnet } = kit.devnet;
    const resourceServer = new x402ResourceServer(
      new HTTPFacilitatorClient({ url: kit.facilitatorUrl }),
    ).register(`eip155:${devnet.chainId}`, new OfficialExactEvmServer());
    const app = express();
    app.use(
      paymentMiddleware(
        {
          'GET /paid': {
            accepts: {
              scheme: 'exact',
              network: `eip155:${devnet.chainId}`,
              payTo: devnet.accounts.payTo.address,
              price: {
                amount: '1000',
                asset: devnet.token.address,
                extra: { name: devnet.token.name, version: devnet.token.version },
              },
            },
          },
        },
        resourceServer,
      ),
    );
    app.get('/paid', (_req, res) => void res.json({ paid: true }));
    official = await listen(app);
  });
  afterAll(async () => {
    await official?.close();
  });

  it('keeps the x402 rule: the paid answer names the transaction that moved the price', async () => {
    const results = await audit(
      official,
      FAULT_AUDITS.filter((a) => a.profile === 'x402'),
    );
    expect(results.map((r) => `${r.id} ${r.status} ${r.message ?? ''}`.trim())).toEqual(['AFLT-01 passed']);
  });

  it('answers a lost settle answer with a refusal of the payer it charged (it keeps no ledger)', async () => {
    const [result] = await audit(
      official,
      FAULT_AUDITS.filter((a) => a.id === 'AFLT-03'),
    );
    expect(result?.status).toBe('failed');
    expect(result?.message).toMatch(/settle-answer-dropped: status .*expected 502, got 402/);
  });
});
