// Gate step 3 of 8: identified — a payment carrying a payment identifier, bound to its request (after read-payment, before claim; skipped without an identifier).
import { TollboothError } from '../errors/tollbooth-error';
import type { RequestView } from '../http/types';
import { isAnswered, isRejected } from '../ledger/lifecycle';
import type { LedgerEntry, ReplacedBinding } from '../ledger/types';
import type { PaymentPayload, PaymentRequirements } from '../protocol/schemas';
import type { RouteMatch } from '../routes/types';
import { claimAndAnswer, IDENTIFIER_TAKEN } from './claim';
import { schemeFor } from './config';
import { answeredOnce, fromExisting, refusesReplay } from './existing-entry';
import { codeForReason } from './match-requirements';
import { type IdentifiedRequest, type PaymentClaim, RETRY, type Retry, startFlight } from './payment-context';
import { requestFingerprint } from './request-fingerprint';
import { errorResponse, respond } from './responses';
import { type GateRuntime, reject, safeHook } from './runtime';
import type { Outcome, PaymentRequest } from './types';

/** The identifier's binding key and the fingerprint of the request it came with (its body read here). */
export async function identify(
  rt: GateRuntime,
  request: RequestView,
  match: RouteMatch,
  requestId: string,
  payer: string,
  identifier: string,
): Promise<IdentifiedRequest | Outcome> {
  let body: Uint8Array = new Uint8Array();
  try {
    if (request.body) body = await request.body(rt.settings.maxIdentifiedBodyBytes);
  } catch (error) {
    if (error instanceof TollboothError) return respond(errorResponse(error.code, requestId, error.message));
    throw error;
  }
  const fingerprint = requestFingerprint({
    method: request.method.toUpperCase(),
    resourceUrl: match.resourceUrl,
    query: match.target.query,
    body,
  });
  return { key: `${payer.toLowerCase()}:${identifier}`, fingerprint };
}

/**
 * A payment carrying an identifier (docs/payment-identifier.md). The identifier is bound to the
 * first request it paid for: the same request is answered from that payment's ledger entry —
 * whatever payload this one is, which is never verified or settled — and another request is a
 * 409. An identifier whose payment charged nothing (released, or rejected) is free again.
 */
export async function answerIdentified(
  rt: GateRuntime,
  base: PaymentClaim,
  paid: PaymentRequest,
  request: IdentifiedRequest,
): Promise<Outcome> {
  const { requestId } = base;
  for (let attempt = 0; attempt < 8; attempt++) {
    let replaces: ReplacedBinding | undefined;
    let bound: LedgerEntry | undefined;
    try {
      const binding = await rt.ledger.identifier(request.key);
      if (binding) {
        const entry = await rt.ledger.get(binding.entry);
        // Charged nothing: free again, but only this version of the binding may be replaced (the
        // store checks it, so two requests that both read it here cannot both take it).
        if (!entry || isRejected(entry)) replaces = { entry: binding.entry, version: binding.version };
        else if (binding.fingerprint !== request.fingerprint) {
          return respond(
            errorResponse(
              'payment_identifier_conflict',
              requestId,
              'this payment identifier was used for a different request; use a new identifier',
            ),
          );
        } else bound = entry;
      }
    } catch (error) {
      rt.logger?.error({ err: error, requestId }, 'ledger identifier lookup failed');
      return respond(errorResponse('ledger_unavailable', requestId));
    }
    if (bound) {
      const answer = await fromBoundPayment(rt, base, paid, bound);
      if (answer !== RETRY) return answer;
      continue;
    }
    let answer: Outcome | typeof IDENTIFIER_TAKEN;
    try {
      answer = await claimAndAnswer(rt, base, paid, replaces ? { ...request, replaces } : request);
    } catch (error) {
      rt.logger?.error({ err: error, requestId }, 'ledger identifier binding failed');
      return respond(errorResponse('ledger_unavailable', requestId));
    }
    if (answer !== IDENTIFIER_TAKEN) return answer;
  }
  return respond(errorResponse('payment_in_progress', requestId));
}

/**
 * Answers the same request under the same identifier from the payment that paid for it, exactly
 * as a retry of that payment's own payload would be answered: its stored response, byte for
 * byte, or (in flight, uncertain, settled before its handler) the ledger's usual path with the
 * stored payload. The new payload is never verified nor settled.
 */
async function fromBoundPayment(
  rt: GateRuntime,
  base: PaymentClaim,
  paid: PaymentRequest,
  entry: LedgerEntry,
): Promise<Outcome | Retry> {
  if (!base.authenticated) {
    // Nothing proves this payload is the payer's: the facilitator must, before it gets anything.
    const verdict = await rt.facilitator
      .verify(base.wirePayload, base.wireRequirement)
      .catch(() => undefined);
    if (!verdict) return respond(errorResponse('facilitator_unavailable', base.requestId));
    if (!verdict.isValid) {
      const reason = verdict.invalidReason ?? 'invalid';
      const code = codeForReason(reason, 'payment_verification_failed');
      return reject(rt, base.match, base.requestId, code, verdict.invalidMessage ?? reason);
    }
  }
  if (refusesReplay(rt, entry)) return answeredOnce(rt, base.match, base.requestId, entry);
  if (isAnswered(entry)) {
    safeHook(rt, () => rt.hooks.onReplay?.(entry, base.request));
    return { kind: 'replay', response: entry.response, entry };
  }
  const requirement = entry.requirements as PaymentRequirements;
  const scheme = schemeFor(rt.schemes, requirement);
  if (!scheme) return respond(errorResponse('payment_in_progress', base.requestId));
  const running = rt.ledger.flight(entry.id);
  if (running) {
    await running;
    return RETRY;
  }
  const original: PaymentClaim = {
    ...base,
    scheme,
    v2Payload: entry.payload as PaymentPayload,
    v2Requirement: requirement,
    wirePayload: entry.payload as PaymentPayload,
    wireRequirement: requirement,
    entry: { id: entry.id, owner: base.entry.owner },
    validBefore: entry.validBefore,
    authenticated: true,
  };
  const originalPaid: PaymentRequest = {
    ...paid,
    identity: entry.id,
    payer: entry.payer ?? paid.payer,
    payload: original.wirePayload,
    requirements: original.wireRequirement,
  };
  const ctx = startFlight(rt, original);
  try {
    const answer = await fromExisting(rt, ctx, originalPaid, entry);
    if (answer === RETRY || answer.kind !== 'proceed') ctx.endFlight();
    return answer;
  } catch (error) {
    ctx.endFlight();
    throw error;
  }
}
