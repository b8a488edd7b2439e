// Part of gate step 2 of 8 (read-payment): which route requirement a payment's `accepted` matches, and the code of a wire reason.
import type { ErrorCode } from '../errors/codes';
import type { PaymentRequirements } from '../protocol/schemas';

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) =>
      Object.hasOwn(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

const CORE = ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'] as const;

/**
 * Whether a client's `accepted` matches a server requirement as the official server decides:
 * exact equality of every core field (a lower-cased `payTo` does not match), and every server
 * `extra` key present and equal; extra client keys are allowed.
 */
export function requirementMatches(server: PaymentRequirements, accepted: PaymentRequirements): boolean {
  for (const key of CORE) if (server[key] !== accepted[key]) return false;
  const extra = server.extra ?? {};
  const theirs = accepted.extra ?? {};
  for (const [key, value] of Object.entries(extra)) {
    if (!Object.hasOwn(theirs, key) || !deepEqual(value, theirs[key])) return false;
  }
  return true;
}

/** Finds the requirement `accepted` matches, or the code of the first field that differs. */
export function findRequirement(
  requirements: readonly PaymentRequirements[],
  accepted: PaymentRequirements,
): { requirement: PaymentRequirements } | { code: ErrorCode } {
  const found = requirements.find((r) => requirementMatches(r, accepted));
  if (found) return { requirement: found };
  const steps: Array<[keyof PaymentRequirements, ErrorCode]> = [
    ['scheme', 'payment_scheme_mismatch'],
    ['network', 'payment_network_mismatch'],
    ['asset', 'payment_asset_mismatch'],
    ['amount', 'payment_amount_mismatch'],
    ['payTo', 'payment_recipient_mismatch'],
  ];
  let candidates = requirements;
  for (const [field, code] of steps) {
    candidates = candidates.filter((r) => r[field] === accepted[field]);
    if (candidates.length === 0) return { code };
  }
  return { code: 'payment_requirements_mismatch' };
}

/** Maps a wire reason string (scheme or facilitator) to the stable code of its family. */
export function codeForReason(reason: string | undefined, fallback: ErrorCode): ErrorCode {
  if (!reason) return fallback;
  const r = reason.toLowerCase();
  if (r.includes('insufficient')) return 'payment_insufficient_funds';
  if (r.includes('nonce_already_used') || r.includes('already_used')) return 'payment_already_used';
  if (r.includes('signature')) return 'payment_signature_invalid';
  if (r.includes('recipient') || r.includes('pay_to') || r.includes('payto'))
    return 'payment_recipient_mismatch';
  if (r.includes('valid_before') || r.includes('expired')) return 'payment_expired';
  if (r.includes('valid_after')) return 'payment_not_yet_valid';
  if (r.includes('value_mismatch') || r.includes('amount')) return 'payment_amount_mismatch';
  if (r.includes('network')) return 'payment_network_mismatch';
  if (r.endsWith('_scheme') || r.includes('unsupported_scheme')) return 'payment_scheme_mismatch';
  return fallback;
}
