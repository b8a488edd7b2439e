// Gate step 4 of 8: claim — claim the payment in the ledger and verify it (after read-payment or identified, before reserve-balance; existing-entry when it is in the ledger already).
import { claim, isAnswered, isRejected, markVerified } from '../ledger/lifecycle';
import type { ClaimResult, LedgerEntry } from '../ledger/types';
import type { OnChainCheck } from '../scheme';
import { fromExisting } from './existing-entry';
import { canAskChain } from './judge-refusal';
import { codeForReason } from './match-requirements';
import {
  type IdentifiedRequest,
  type PaymentClaim,
  type PaymentContext,
  RETRY,
  releaseQuietly,
  startFlight,
} from './payment-context';
import { proceed } from './proceed';
import { reserveBalance } from './reserve-balance';
import { errorResponse, respond } from './responses';
import { type GateRuntime, reject } from './runtime';
import { settleNow } from './settle-step';
import type { Outcome, PaymentRequest } from './types';

/** `claimAndAnswer` claimed a payment but its identifier is bound to another payment now: look again. */
export const IDENTIFIER_TAKEN = Symbol('identifier-taken');

/**
 * Claims the payment in the ledger and answers it; with an identifier, binds the identifier to
 * the claimed payment first, or gives the claim back (`IDENTIFIER_TAKEN`) when another payment
 * holds the identifier now.
 */
export async function claimAndAnswer(
  rt: GateRuntime,
  base: PaymentClaim,
  paid: PaymentRequest,
  identified?: IdentifiedRequest,
): Promise<Outcome | typeof IDENTIFIER_TAKEN> {
  const { match, requestId } = base;
  const { ledger } = rt;
  const id = base.entry.id;
  let attempts = 0;
  while (attempts < 8) {
    const running = ledger.flight(id);
    if (running) {
      // Single-flight: wait for this process's request with the same payment, then answer from
      // the ledger without queueing behind each other when the answer is final.
      await running;
      const entry = await ledger.get(id).catch(() => undefined);
      if (entry && (isAnswered(entry) || isRejected(entry))) {
        const result = await fromExisting(rt, { ...base, endFlight: () => {} }, paid, entry);
        if (result !== RETRY) return result;
      }
      continue;
    }
    attempts++;
    const ctx = startFlight(rt, base);
    let claimed: ClaimResult;
    const fresh = ledger.newEntry({
      id,
      owner: ctx.entry.owner,
      resource: match.resourceUrl,
      route: match.route.key,
      network: ctx.v2Requirement.network,
      payer: paid.payer,
      payload: ctx.wirePayload,
      requirements: ctx.wireRequirement,
      validBefore: ctx.validBefore,
    });
    try {
      claimed = await claim(ledger, fresh);
    } catch (error) {
      ctx.endFlight();
      rt.logger?.error({ err: error, requestId }, 'ledger claim failed');
      return respond(errorResponse('ledger_unavailable', requestId));
    }
    if (claimed.acquired) {
      if (identified && !(await bindIdentifier(rt, ctx, identified, fresh))) return IDENTIFIER_TAKEN;
      try {
        return await verifyAndProceed(rt, ctx, paid);
      } catch (error) {
        // Only a claim that spent nothing (claimed/verified) can be released; anything later stays.
        await releaseQuietly(rt, ctx);
        throw error;
      }
    }
    try {
      const result = await fromExisting(rt, ctx, paid, claimed.entry);
      if (result !== RETRY) {
        // A `proceed` keeps the flight until its `settle`/`release`.
        if (result.kind !== 'proceed') ctx.endFlight();
        return result;
      }
    } catch (error) {
      ctx.endFlight();
      throw error;
    }
    ctx.endFlight();
  }
  return respond(errorResponse('payment_in_progress', requestId));
}

/**
 * Binds the identifier to a payment this request just claimed. `false` (the claim given back)
 * when another payment holds the identifier; a store failure gives the claim back and throws.
 */
async function bindIdentifier(
  rt: GateRuntime,
  ctx: PaymentContext,
  identified: IdentifiedRequest,
  fresh: LedgerEntry,
): Promise<boolean> {
  let result: Awaited<ReturnType<GateRuntime['ledger']['bindIdentifier']>>;
  try {
    result = await rt.ledger.bindIdentifier(
      {
        key: identified.key,
        fingerprint: identified.fingerprint,
        entry: fresh.id,
        createdAt: fresh.createdAt,
        expiresAt: fresh.expiresAt,
      },
      identified.replaces,
    );
  } catch (error) {
    await releaseQuietly(rt, ctx);
    throw error;
  }
  if (result.bound) return true;
  await releaseQuietly(rt, ctx);
  return false;
}

/**
 * Verifies a fresh claim; settles at once on a route that settles first — straight with
 * `/settle`, which verifies as it settles, unless `verifyBeforeSettle` asks for `/verify` first.
 * A route that settles after its handler verifies locally when its scheme reads the chain (the
 * pre-verification already done, plus one chain read of balance and authorization state), and
 * asks `/verify` otherwise, when that read fails, or when `verifyBeforeSettle` says so.
 */
async function verifyAndProceed(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaymentRequest,
): Promise<Outcome> {
  const { match, requestId } = ctx;
  const settlesFirst = ctx.route.settle === 'before-handler';
  if (settlesFirst && !rt.verifyBeforeSettle) return settleThenProceed(rt, ctx, paid, true);
  const local = settlesFirst || rt.verifyBeforeSettle ? undefined : await verifyLocally(rt, ctx, paid);
  if (local?.status === 'invalid') {
    await releaseQuietly(rt, ctx);
    return reject(
      rt,
      match,
      requestId,
      codeForReason(local.reason, 'payment_verification_failed'),
      local.message,
    );
  }
  if (local?.status !== 'valid') {
    let verdict: Awaited<ReturnType<GateRuntime['facilitator']['verify']>>;
    try {
      verdict = await rt.facilitator.verify(ctx.wirePayload, ctx.wireRequirement);
    } catch (error) {
      await releaseQuietly(rt, ctx);
      rt.logger?.warn({ err: error, requestId }, 'facilitator verify failed');
      return respond(errorResponse('facilitator_unavailable', requestId));
    }
    if (!verdict.isValid) {
      await releaseQuietly(rt, ctx);
      const reason = verdict.invalidReason ?? 'invalid';
      return reject(
        rt,
        match,
        requestId,
        codeForReason(reason, 'payment_verification_failed'),
        verdict.invalidMessage ?? reason,
      );
    }
  }
  const verified = await markVerified(rt.ledger, ctx.entry);
  if (!verified) {
    ctx.endFlight();
    return respond(errorResponse('payment_in_progress', requestId));
  }
  // A handler that acts or costs runs only on a balance that covers every payment waiting on it.
  const refused = await reserveBalance(rt, ctx, paid);
  if (refused) {
    await releaseQuietly(rt, ctx);
    return refused;
  }
  if (settlesFirst) return settleThenProceed(rt, ctx, paid, false);
  return proceed(rt, ctx, paid);
}

/**
 * Local verify (docs/ledger.md#local-verify): the payload's signature was checked here
 * (`preVerify`, with amount, recipient, asset and window), so the chain alone says the rest — the
 * payer's balance and the authorization's state, in one read. `undefined` (ask `/verify`) when the
 * signature was left to the facilitator, the scheme has no chain reader for the network, or the
 * read failed: the payer is never refused for the chain reader's error.
 */
async function verifyLocally(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaymentRequest,
): Promise<OnChainCheck | undefined> {
  const { scheme } = ctx;
  if (!ctx.authenticated || !scheme.checkOnChain || !canAskChain(ctx)) return undefined;
  let answer: OnChainCheck;
  try {
    answer = await scheme.checkOnChain({
      payload: ctx.v2Payload,
      requirements: ctx.v2Requirement,
      payer: paid.payer,
    });
  } catch (error) {
    answer = { status: 'unknown', message: error instanceof Error ? error.message : String(error) };
  }
  if (answer.status === 'unknown') {
    rt.logger?.warn(
      { requestId: ctx.requestId, note: answer.message },
      'local verify could not read the chain: asking the facilitator',
    );
    return undefined;
  }
  return answer;
}

/** A route that settles first: settles, then lets the handler run on the receipt. */
async function settleThenProceed(
  rt: GateRuntime,
  ctx: PaymentContext,
  paid: PaymentRequest,
  unverified: boolean,
): Promise<Outcome> {
  const settled = await settleNow(rt, ctx, undefined, { unverified });
  if (settled.kind !== 'paid') {
    ctx.endFlight();
    return respond(settled.response);
  }
  paid.settlement = settled.receipt;
  return proceed(rt, ctx, paid);
}
