// Runs the fault audits against a running server whose facilitator URL points at the kit's fault
// proxy: one payment per audit, the fault during its first request, then the exact payload
// retried with the facilitator healthy, the chain telling what was charged.
import type { Hash } from 'viem';
import { AuditFailure, check, checkEqual } from '../audit-failure';
import { type AuditChainConfig, createAuditChain, effectsOf } from '../facilitator/chain';
import { AuditSetupError } from '../facilitator/run';
import { type Answer, decodeHeader, retryAfterMs, send, TargetUnreachable } from '../http';
import { type AuditResult, oneLine } from '../results';
import type { AuditContext, ReplayMode } from '../types';
import { FAULT_AUDITS } from './audits';
import { paymentFor, receiptOf, type ServerPayment } from './server-payment';
import type { FaultAudit, FaultAuditContext, FaultSwitch } from './types';

export interface FaultTarget {
  /** The server's origin, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** A paid route whose handler answers 2xx. */
  paidPath: string;
  fetch?: typeof fetch;
}

export interface RunFaultAuditsOptions {
  /** The chain the server's payments settle on, with the kit's payer. */
  chain: AuditChainConfig;
  /** The proxy between the server and its facilitator. */
  faults: FaultSwitch;
  /** Default: every fault audit. */
  audits?: readonly FaultAudit[];
  /** How long the server may take to serve the retried payload once the fault is gone. Default 30 000 ms. */
  recoveryMs?: number;
  /** The server's replay mode: the replay audit of the other mode is skipped. Default `stored-answer`. */
  replay?: ReplayMode;
  /** Limit of one request to the server (it must time out its own facilitator calls first). Default 60 000 ms. */
  requestTimeoutMs?: number;
  onResult?(result: AuditResult): void;
}

/** An audit whose fault the server never met: its rule cannot be judged on this route. */
class FaultNotMet extends Error {}

const describe = (audit: FaultAudit) => ({
  id: audit.id,
  level: audit.level,
  profile: audit.profile,
  sentence: audit.sentence,
});

/** Statuses a server may answer while it resolves an uncertain payment: wait and retry. */
const PENDING = new Set([409, 425, 429, 500, 502, 503, 504]);

/**
 * Runs the fault audits one after another.
 * @example
 * const results = await runFaultAudits({ url, paidPath: '/api/v1/fees/now' }, { chain: kit.chain, faults: kit.proxy });
 */
export async function runFaultAudits(
  target: FaultTarget,
  options: RunFaultAuditsOptions,
): Promise<AuditResult[]> {
  const chain = createAuditChain(options.chain);
  chain.startBlock = await chain.client.getBlockNumber();
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const baseFetch = target.fetch ?? globalThis.fetch;
  const ctx: FaultAuditContext = {
    url: target.url,
    paidPath: target.paidPath,
    chain,
    faults: options.faults,
    fetch: (input, init) => baseFetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
    recoveryMs: options.recoveryMs ?? 30_000,
    replay: options.replay ?? 'stored-answer',
  };
  const results: AuditResult[] = [];
  for (const audit of options.audits ?? FAULT_AUDITS) {
    if (audit.replay !== undefined && audit.replay !== ctx.replay) {
      const message = `for servers with replay '${audit.replay}' (this one is audited as '${ctx.replay}')`;
      const skipped: AuditResult = { ...describe(audit), status: 'skipped', message };
      options.onResult?.(skipped);
      results.push(skipped);
      continue;
    }
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    let result: AuditResult;
    try {
      await runFaultAudit(audit, ctx);
      result = { ...describe(audit), status: 'passed', ms: ms() };
    } catch (error) {
      if (error instanceof FaultNotMet)
        result = { ...describe(audit), status: 'skipped', message: error.message, ms: ms() };
      else if (error instanceof AuditFailure)
        result = { ...describe(audit), status: 'failed', message: error.message, ms: ms() };
      else
        result = {
          ...describe(audit),
          status: 'error',
          message: `could not run: ${oneLine(error)}`,
          ms: ms(),
        };
    } finally {
      await options.faults.setMode({ mode: 'pass' });
    }
    options.onResult?.(result);
    results.push(result);
  }
  return results;
}

async function runFaultAudit(audit: FaultAudit, ctx: FaultAuditContext): Promise<void> {
  const server: AuditContext = {
    baseUrl: ctx.url,
    fetch: ctx.fetch,
    paths: { paid: ctx.paidPath },
    rateLimit: { maxWaitMs: 60_000, waitedMs: 0 },
  };
  await ctx.faults.setMode({ mode: 'pass' });
  const unpaid = await send(server, ctx.paidPath);
  if (unpaid.status !== 402)
    throw new AuditSetupError(`unpaid GET ${ctx.paidPath} answered ${unpaid.status}, not 402`);
  const payment = await paymentFor(ctx.chain, decodeHeader(unpaid, 'payment-required'));
  const { from, nonce } = payment.authorization;
  const before = await ctx.chain.balanceOf(from);
  const pay = () => send(server, ctx.paidPath, { headers: { 'PAYMENT-SIGNATURE': payment.header } });
  if (audit.replay !== undefined) return replayAudit(ctx, audit.replay, payment, before, pay);

  const playedBefore = await faultsPlayed(ctx.faults);
  await ctx.faults.setMode(audit.fault);
  let first: Answer;
  let played: number | undefined;
  try {
    first = await pay();
    played = playedBefore === undefined ? undefined : (await faultsPlayed(ctx.faults))! - playedBefore;
  } catch (error) {
    if (error instanceof TargetUnreachable)
      throw new AuditFailure(`while the fault played, the server gave no answer: ${error.message}`);
    throw error;
  } finally {
    await ctx.faults.setMode({ mode: 'pass' });
  }
  const what = `the answer while the facilitator ${audit.fault.mode === 'pass' ? 'was healthy' : `played ${audit.fault.mode}`}`;
  if (audit.expect !== 'served' && played === 0 && first.status >= 200 && first.status < 300) {
    // The server never made the call the fault plays on (a route that settles without `/verify`):
    // the rule does not apply here, but the payment it served must still be charged once.
    await checkServedOnce(ctx, payment, before, first, what);
    throw new FaultNotMet(
      `the server never met the fault (no ${describeOperations(audit)} call while it played) and served the payment, charged once: the rule does not apply to ${ctx.paidPath}`,
    );
  }
  if (audit.expect === 'refused') return refusedAudit(ctx, payment, before, first, what, pay);
  if (first.status >= 200 && first.status < 300) {
    // A paid answer is only right if the chain shows its transfer (checked below).
    check(audit.expect !== 'unpaid', `${what} was ${first.status}: served without a verified payment`);
  } else {
    check(audit.expect !== 'served', `${what} was ${first.status}: ${first.text.slice(0, 160)}`);
    if (audit.expect === 'unpaid') {
      check(first.status >= 500, `${what} was ${first.status}, not a 5xx: ${first.text.slice(0, 160)}`);
      check(
        !(await ctx.chain.authorizationUsed(from, nonce)),
        `${what}: the authorization was used on chain`,
      );
      checkEqual(await ctx.chain.balanceOf(from), before, `${what}: payer balance`);
    } else {
      checkEqual(first.status, 502, `${what}: status (${first.text.slice(0, 160)})`);
    }
  }

  const servedAtOnce = first.status >= 200 && first.status < 300;
  const served = servedAtOnce ? first : await retryUntilServed(ctx, pay);
  await checkServedOnce(
    ctx,
    payment,
    before,
    served,
    servedAtOnce ? what : 'the answer to the retried payload',
  );
}

/**
 * The facilitator refused the settlement definitely: the first answer is 402 with no paid answer
 * and no receipt of a success, nothing moved on chain, and the exact payload retried with the
 * facilitator healthy is refused again (the refusal is final in the ledger), still charging nothing.
 */
async function refusedAudit(
  ctx: FaultAuditContext,
  payment: ServerPayment,
  before: bigint,
  first: Answer,
  what: string,
  pay: () => Promise<Answer>,
): Promise<void> {
  const { from, nonce } = payment.authorization;
  checkEqual(first.status, 402, `${what}: status (${first.text.slice(0, 160)})`);
  check(receiptOf(first)?.['success'] !== true, `${what} carries a PAYMENT-RESPONSE of a success`);
  const unmoved = async (when: string) => {
    check(!(await ctx.chain.authorizationUsed(from, nonce)), `${when}: the authorization was used on chain`);
    checkEqual(await ctx.chain.balanceOf(from), before, `${when}: payer balance`);
  };
  await unmoved(what);
  const again = await pay();
  checkEqual(
    again.status,
    402,
    `the exact payload retried after the refusal: status (${again.text.slice(0, 160)})`,
  );
  await unmoved('the exact payload retried after the refusal');
}

/** Requests whose answer a fault changed, dropped or held so far; undefined when the switch cannot tell. */
async function faultsPlayed(faults: FaultSwitch): Promise<number | undefined> {
  if (!faults.stats) return undefined;
  const { faulted } = await faults.stats();
  return faulted.verify + faulted.settle + faulted.supported + faulted.other;
}

/** The facilitator operations an audit's fault plays on, for a message. */
function describeOperations(audit: FaultAudit): string {
  const { mode, operations } = audit.fault;
  if (operations) return operations.map((op) => `/${op}`).join(' or ');
  if (mode === 'verify-timeout') return '/verify';
  if (mode === 'slow-supported') return '/supported';
  return mode.startsWith('settle-') ? '/settle' : 'facilitator';
}

/** Fails unless `served` is proven on chain and the payer was charged exactly once in all. */
async function checkServedOnce(
  ctx: FaultAuditContext,
  payment: ServerPayment,
  before: bigint,
  served: Answer,
  what: string,
): Promise<void> {
  const { from, nonce } = payment.authorization;
  await checkProven(ctx, payment, served, what);
  checkEqual(await ctx.chain.usedLogs(from, nonce), 1, 'AuthorizationUsed events of the payment on chain');
  checkEqual(
    before - (await ctx.chain.balanceOf(from)),
    BigInt(payment.authorization.value),
    'what the payer was charged in all',
  );
}

/** What an answer says, for a message: its status and code. */
function verdictOf(answer: Answer): string {
  if (answer.status >= 200 && answer.status < 300) return String(answer.status);
  try {
    const error = (JSON.parse(answer.text) as { error?: unknown }).error;
    const code = typeof error === 'string' ? error : (error as { code?: unknown } | undefined)?.code;
    return `${answer.status} ${String(code)}`;
  } catch {
    return `${answer.status} (no JSON body)`;
  }
}

/**
 * One payload sent five times at once with the facilitator healthy, then once more: the paid
 * answers and refusals `mode` asks for, every paid answer proven on chain, the payer charged once.
 */
async function replayAudit(
  ctx: FaultAuditContext,
  mode: ReplayMode,
  payment: ServerPayment,
  before: bigint,
  pay: () => Promise<Answer>,
): Promise<void> {
  const { from, nonce } = payment.authorization;
  const answers = await Promise.all(Array.from({ length: 5 }, pay));
  const again = await pay();
  const verdicts = [...answers, again].map(verdictOf);
  const paid = [...answers, again].filter((a) => a.status >= 200 && a.status < 300);
  if (mode === 'stored-answer') {
    checkEqual(verdicts.join(', '), Array(6).fill('200').join(', '), 'answers to the payload sent six times');
    checkEqual(new Set(paid.map((a) => a.text)).size, 1, 'distinct paid bodies');
    checkEqual(
      new Set(paid.map((a) => a.header('payment-response'))).size,
      1,
      'distinct PAYMENT-RESPONSE receipts',
    );
  } else {
    checkEqual(paid.length, 1, `paid answers among ${verdicts.join(', ')}`);
    for (const verdict of verdicts.filter((v) => v !== '200'))
      check(
        verdict === '402 payment_already_used' || verdict === '409 payment_in_progress',
        `a repeat of the payload answered ${verdict}`,
      );
    checkEqual(verdictOf(again), '402 payment_already_used', 'the answer to the payload sent once more');
  }
  await checkProven(ctx, payment, paid[0]!, 'the paid answer');
  checkEqual(await ctx.chain.usedLogs(from, nonce), 1, 'AuthorizationUsed events of the payment on chain');
  checkEqual(
    before - (await ctx.chain.balanceOf(from)),
    BigInt(payment.authorization.value),
    'what the payer was charged in all',
  );
}

/** Retries the exact payload until the server serves it, waiting as its answers ask. */
async function retryUntilServed(ctx: FaultAuditContext, pay: () => Promise<Answer>): Promise<Answer> {
  const deadline = Date.now() + ctx.recoveryMs;
  let last: Answer | undefined;
  for (let attempt = 1; ; attempt++) {
    last = await pay();
    if (last.status >= 200 && last.status < 300) return last;
    check(
      PENDING.has(last.status),
      `retry ${attempt} of the exact payload was refused with ${last.status}: ${last.text.slice(0, 160)}`,
    );
    check(
      Date.now() < deadline,
      `the exact payload was not served within ${ctx.recoveryMs / 1000} s of the facilitator recovering (${attempt} tries; last ${last.status}: ${last.text.slice(0, 160)})`,
    );
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(2_000, Math.max(200, retryAfterMs(last!, 500)))),
    );
  }
}

/** Fails unless a paid answer carries a successful receipt whose transaction moved this payment on chain. */
async function checkProven(
  ctx: FaultAuditContext,
  payment: ServerPayment,
  answer: Answer,
  what: string,
): Promise<void> {
  const receipt = receiptOf(answer);
  check(receipt, `${what} (${answer.status}) carries no PAYMENT-RESPONSE`);
  checkEqual(receipt['success'], true, `${what}: PAYMENT-RESPONSE success`);
  const transaction = receipt['transaction'];
  check(
    typeof transaction === 'string' && /^0x[0-9a-fA-F]{64}$/.test(transaction),
    `${what}: PAYMENT-RESPONSE transaction ${JSON.stringify(transaction)}`,
  );
  const mined = await ctx.chain.receipt(transaction as Hash);
  check(mined, `${what} was served on transaction ${transaction}, which is not on chain`);
  checkEqual(mined.status, 'success', `${what}: status of transaction ${transaction}`);
  const effects = effectsOf(ctx.chain, mined, payment.authorization);
  checkEqual(effects.used, 1, `${what}: AuthorizationUsed events of the payment in ${transaction}`);
  checkEqual(
    effects.transfers.join(','),
    payment.authorization.value,
    `${what}: transfers from the payer to payTo in ${transaction}`,
  );
}
