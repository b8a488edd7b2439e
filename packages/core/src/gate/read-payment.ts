// Gate step 2 of 8: read-payment — decode the payment header, check it locally, pre-verify it with the scheme (after admit, before identified or claim).
import type { ErrorCode } from '../errors/codes';
import { TollboothError } from '../errors/tollbooth-error';
import { decodePaymentHeader } from '../protocol/codec';
import { PAYMENT_IDENTIFIER, readPaymentIdentifier } from '../protocol/payment-identifier';
import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
} from '../protocol/schemas';
import { V1_NETWORKS } from '../protocol/schemas';
import type { RouteMatch } from '../routes/types';
import type { SchemeServer } from '../scheme';
import type { Admitted } from './admit';
import { fingerprintOf } from './authenticated-headers';
import { schemeFor } from './config';
import { codeForReason, findRequirement } from './match-requirements';
import type { PaymentClaim } from './payment-context';
import { type GateRuntime, refuseMalformed, reject, safeHook } from './runtime';
import type { Outcome, PaymentRequest } from './types';

const V1_NAMES: Record<string, string> = Object.fromEntries(
  Object.entries(V1_NETWORKS).map(([k, v]) => [v, k]),
);

/** The payment header of a request, by name. */
export interface PaymentHeader {
  value: string;
  name: 'payment-signature' | 'x-payment';
}

/** A payment read and checked locally: what the ledger claims, and the identifier it carries. */
export interface PaymentRead {
  kind: 'read';
  claim: PaymentClaim;
  paid: PaymentRequest;
  identifier: string | undefined;
}

/** The payment in both forms: v2 (checks) and as the facilitator gets it (v1 for a v1 route). */
type Forms = Pick<PaymentClaim, 'v2Payload' | 'v2Requirement' | 'wirePayload' | 'wireRequirement'>;

/**
 * Reads the payment of a request at a paid route: a byte-identical replay of a settled payment is
 * answered at once; else the header is decoded, its version, identifier and requirement checked,
 * and the scheme pre-verifies it. A refusal is an outcome; an accepted payment is `read`.
 */
export async function readPayment(
  rt: GateRuntime,
  { match, requestId, request }: Admitted,
  header: PaymentHeader,
): Promise<PaymentRead | Outcome> {
  const route = match.route;
  const authenticated = rt.authenticated;
  const key = fingerprintOf(header.value);
  // With identifiers, one payload may be sent for another request (a 409): no shortcut by header.
  // With strict replay a stored answer is never sent twice: the ledger judges every payload.
  if (!route.paymentIdentifier && rt.replay !== 'strict') {
    const replay = await authenticated.replayOf(key, header.value, match);
    if (replay) {
      if (replay.kind === 'replay') safeHook(rt, () => rt.hooks.onReplay?.(replay.entry, request));
      return replay;
    }
  }
  let decoded: PaymentPayload | PaymentPayloadV1;
  try {
    decoded = decodePaymentHeader(header.value, { maxBytes: rt.settings.maxPaymentHeaderBytes }) as
      | PaymentPayload
      | PaymentPayloadV1;
  } catch (error) {
    if (error instanceof TollboothError)
      return refuseMalformed(rt, match, requestId, error.code, error.message);
    throw error;
  }
  // A v2 route may take v1 payments too (`acceptV1Payments`: MCP clients that speak v1).
  const v1Accepted = decoded.x402Version === 1 && route.config.acceptV1Payments === true;
  if (decoded.x402Version !== route.x402Version && !v1Accepted) {
    const message = `this route takes x402 version ${route.x402Version}, the payment is version ${decoded.x402Version}`;
    return reject(rt, match, requestId, 'payment_version_mismatch', message);
  }
  let identifier: string | undefined;
  if (route.paymentIdentifier && decoded.x402Version === 2) {
    const reading = readPaymentIdentifier(decoded.extensions);
    if (reading.kind === 'malformed')
      return refuseMalformed(rt, match, requestId, 'payment_identifier_invalid', reading.message);
    if (reading.kind === 'present') identifier = reading.id;
    else if (route.paymentIdentifier.required) {
      const message = `this route requires a payment identifier in extensions["${PAYMENT_IDENTIFIER}"].info.id`;
      return refuseMalformed(rt, match, requestId, 'payment_identifier_invalid', message);
    }
  }

  const forms = formsOf(match, decoded);
  if ('code' in forms)
    return reject(rt, match, requestId, forms.code, 'the payment does not match the route');
  const scheme = schemeFor(rt.schemes, forms.v2Requirement);
  if (!scheme) return reject(rt, match, requestId, 'payment_scheme_mismatch', 'no scheme for this payment');
  let pre: Awaited<ReturnType<SchemeServer['preVerify']>>;
  try {
    pre = await scheme.preVerify(forms.v2Payload, forms.v2Requirement, Math.floor(rt.now() / 1000));
  } catch (error) {
    const message = error instanceof Error ? error.message : 'the payment could not be checked';
    return reject(rt, match, requestId, 'payment_invalid', message);
  }
  if (!pre.ok) {
    // An authentic payment outside its time window may already be in the ledger: settled (a
    // retry gets the stored response, or payment_already_used) or uncertain (the transfer may
    // have landed: reconcile). Only a payment the ledger has never seen is refused here.
    const entry = pre.known ? await rt.ledger.get(pre.known.identity).catch(() => undefined) : undefined;
    if (!pre.known || !entry)
      return reject(rt, match, requestId, codeForReason(pre.reason, 'payment_invalid'), pre.message);
    pre = { ok: true, ...pre.known };
  } else if (pre.authenticated !== false && rt.replay !== 'strict') {
    authenticated.remember(key, header.value, pre.identity);
  }

  const claim: PaymentClaim = {
    match,
    route,
    scheme,
    ...forms,
    receiptHeader: header.name === 'x-payment' ? 'x-payment-response' : 'payment-response',
    requestId,
    request,
    entry: { id: pre.identity, owner: rt.ledger.owner(requestId) },
    validBefore: pre.validBefore,
    payer: pre.payer,
    authenticated: pre.authenticated !== false,
  };
  const paid: PaymentRequest = {
    requestId,
    route: route.key,
    resource: match.resourceUrl,
    identity: pre.identity,
    payer: pre.payer,
    x402Version: decoded.x402Version,
    header: header.name,
    payload: forms.wirePayload,
    requirements: forms.wireRequirement,
  };
  return { kind: 'read', claim, paid, identifier };
}

/** The route's requirement a payment names (v2: its `accepted`; v1: scheme and network). */
function formsOf(match: RouteMatch, decoded: PaymentPayload | PaymentPayloadV1): Forms | { code: ErrorCode } {
  const route = match.route;
  if (decoded.x402Version === 2) {
    const found = findRequirement(route.requirements, decoded.accepted);
    if ('code' in found) return { code: found.code };
    return {
      v2Requirement: found.requirement,
      v2Payload: decoded,
      wirePayload: decoded,
      wireRequirement: found.requirement,
    };
  }
  const bySchemes = route.requirements.filter((r) => r.scheme === decoded.scheme);
  const found = bySchemes.find((r) => V1_NAMES[r.network] === decoded.network);
  if (!found)
    return { code: bySchemes.length === 0 ? 'payment_scheme_mismatch' : 'payment_network_mismatch' };
  const wireRequirement: PaymentRequirements | PaymentRequirementsV1 = route.requirementsV1(
    match.resourceUrl,
  )[route.requirements.indexOf(found)]!;
  return {
    v2Requirement: found,
    v2Payload: {
      x402Version: 2,
      resource: { url: match.resourceUrl },
      accepted: found,
      payload: decoded.payload,
    },
    wirePayload: decoded,
    wireRequirement,
  };
}
