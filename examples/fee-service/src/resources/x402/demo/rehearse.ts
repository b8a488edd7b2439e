import {
  decodePaymentHeader,
  type FacilitatorClient,
  findRequirement,
  isFacilitatorError,
  type PaymentRequirements,
  type SchemeServer,
} from '@tollbooth/core';
import type { DemoCheck } from './schema';

/** What the rehearsal of one payment header found. */
export type Rehearsal =
  | { verdict: 'would_settle'; payer: string; requirement: PaymentRequirements; checks: DemoCheck[] }
  | { verdict: 'refused'; reason: string; checks: DemoCheck[] }
  | { verdict: 'facilitator_unavailable'; reason: string; checks: DemoCheck[] };

const failed = (check: DemoCheck['check'], detail: string): DemoCheck => ({ check, ok: false, detail });
const skipped = (check: DemoCheck['check']): DemoCheck => ({ check, ok: false, detail: 'not reached' });

/**
 * The checks a paid request goes through before its handler, without any of its effects: decode
 * the header, match the terms, verify locally (the scheme's signature recovery, recipient,
 * amount and validity window) and with the facilitator's `/verify`. Nothing is claimed in the
 * ledger and nothing is settled.
 */
export async function rehearsePayment(options: {
  header: string;
  requirements: readonly PaymentRequirements[];
  schemes: readonly SchemeServer[];
  facilitator: FacilitatorClient;
  nowSeconds: number;
}): Promise<Rehearsal> {
  const checks: DemoCheck[] = [];
  const refuse = (reason: string, check: DemoCheck['check'], detail: string): Rehearsal => {
    checks.push(failed(check, detail));
    for (const next of [
      'decode',
      'requirements',
      'local_verification',
      'facilitator_verification',
    ] as const) {
      if (!checks.some((c) => c.check === next)) checks.push(skipped(next));
    }
    return { verdict: 'refused', reason, checks };
  };

  let payload: ReturnType<typeof decodePaymentHeader>;
  try {
    payload = decodePaymentHeader(options.header);
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'payment_payload_invalid';
    return refuse(code, 'decode', error instanceof Error ? error.message : String(error));
  }
  if (payload.x402Version !== 2) {
    return refuse(
      'payment_payload_invalid',
      'decode',
      'an x402 version 1 payload: the demo rehearses version 2',
    );
  }
  checks.push({
    check: 'decode',
    ok: true,
    detail: `x402 version 2 payload for scheme ${payload.accepted.scheme}`,
  });

  const found = findRequirement(options.requirements, payload.accepted);
  if ('code' in found)
    return refuse(found.code, 'requirements', `the payload accepts other terms (${found.code})`);
  const requirement = found.requirement;
  checks.push({
    check: 'requirements',
    ok: true,
    detail: `${requirement.amount} of ${requirement.asset} on ${requirement.network}`,
  });

  const scheme = options.schemes.find(
    (s) => s.scheme === requirement.scheme && s.supportsNetwork(requirement.network),
  );
  if (!scheme)
    return refuse('payment_scheme_mismatch', 'local_verification', 'no scheme verifies these terms');
  let local: Awaited<ReturnType<SchemeServer['preVerify']>>;
  try {
    local = await scheme.preVerify(payload, requirement, options.nowSeconds);
  } catch (error) {
    return refuse(
      'payment_payload_invalid',
      'local_verification',
      error instanceof Error ? error.message : String(error),
    );
  }
  if (!local.ok) return refuse(local.reason, 'local_verification', local.message);
  checks.push({
    check: 'local_verification',
    ok: true,
    detail: `signed by ${local.payer}, valid until ${new Date(local.validBefore * 1000).toISOString()}`,
  });

  try {
    const verified = await options.facilitator.verify(payload, requirement);
    if (!verified.isValid) {
      return refuse(
        verified.invalidReason ?? 'payment_invalid',
        'facilitator_verification',
        verified.invalidMessage ?? verified.invalidReason ?? 'invalid',
      );
    }
    checks.push({
      check: 'facilitator_verification',
      ok: true,
      detail: `valid for payer ${verified.payer ?? local.payer}`,
    });
    return { verdict: 'would_settle', payer: verified.payer ?? local.payer, requirement, checks };
  } catch (error) {
    if (
      isFacilitatorError(error) &&
      error.httpStatus !== undefined &&
      error.httpStatus >= 400 &&
      error.httpStatus < 500
    ) {
      return refuse('payment_invalid', 'facilitator_verification', error.message);
    }
    checks.push(failed('facilitator_verification', error instanceof Error ? error.message : String(error)));
    return { verdict: 'facilitator_unavailable', reason: 'facilitator_unavailable', checks };
  }
}
