import type { ErrorCode } from '../errors/codes';
import type { SettlementLedger } from '../ledger/settlement-ledger';
import type { RouteMatch } from '../routes/types';
import type { AuthenticatedHeaders } from './authenticated-headers';
import type { GateConfig } from './config';
import { challengeResponse, malformedPaymentResponse } from './responses';
import type { Outcome } from './types';

/** What every step of a gate works with: its configuration and its settlement ledger. */
export interface GateRuntime extends GateConfig {
  ledger: SettlementLedger;
  /** Payment header texts this process authenticated (the replay shortcut). */
  authenticated: AuthenticatedHeaders;
}

/** Calls a hook; what it throws (or rejects with) is logged and ignored. */
export function safeHook(rt: Pick<GateRuntime, 'logger'>, fn: () => unknown): void {
  try {
    const result = fn();
    if (result instanceof Promise)
      result.catch((error) => rt.logger?.warn({ err: error }, 'gate hook failed'));
  } catch (error) {
    rt.logger?.warn({ err: error }, 'gate hook failed');
  }
}

/** Refuses a payment with the route's 402 challenge naming `code`, and reports it (`onRejected`). */
export function reject(
  rt: GateRuntime,
  match: RouteMatch,
  requestId: string,
  code: ErrorCode,
  message: string,
  extra?: Record<string, string>,
): Outcome {
  safeHook(rt, () => rt.hooks.onRejected?.(requestId, code, message));
  return { kind: 'respond', response: challengeResponse(match, requestId, code, extra) };
}

/**
 * Refuses a payment header that is no readable payment with 400, the Error body and the route's
 * challenge (docs/errors.md#payment_payload_invalid), and reports it (`onRejected`).
 */
export function refuseMalformed(
  rt: GateRuntime,
  match: RouteMatch,
  requestId: string,
  code: ErrorCode,
  message: string,
): Outcome {
  safeHook(rt, () => rt.hooks.onRejected?.(requestId, code, message));
  return { kind: 'respond', response: malformedPaymentResponse(match, requestId, code, message) };
}
