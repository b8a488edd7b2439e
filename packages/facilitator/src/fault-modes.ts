// The faults a facilitator fault proxy plays (fault-proxy.ts), and how a mode setting is checked.
import type { FacilitatorOperation } from '@tollbooth/core';

/**
 * The faults a fault proxy (`startFacilitatorFaultProxy`) can play, by name. Every mode but
 * `pass` changes only the operations it names; the others pass through untouched.
 */
export const FACILITATOR_FAULT_MODES = [
  /** Every request is forwarded and its answer passed back unchanged. */
  'pass',
  /** `/verify` is held unanswered (the caller times out); nothing is forwarded. */
  'verify-timeout',
  /** `/settle` is forwarded, then the connection is reset once the facilitator answered: the transfer lands, the answer is lost. */
  'settle-answer-dropped',
  /** `/settle` is forwarded and its answer held back (the caller times out after the facilitator broadcast). */
  'settle-answer-hung',
  /** `/settle` is forwarded and, once the facilitator answered (the transfer landed), answered 500 instead. */
  'settle-500-after-transfer',
  /**
   * `/settle` is forwarded and, once the facilitator answered (the transfer landed), answered
   * HTTP 200 `{success: false, errorReason: "unexpected_settle_error"}` instead: a facilitator that
   * says "failed" after its transfer landed (the official exact EVM facilitator answers so when the
   * answer of its send is lost after the node took the transaction).
   */
  'settle-failed-after-transfer',
  /** As `settle-failed-after-transfer`, with HTTP 400 (some facilitators answer a refusal so). */
  'settle-failed-400-after-transfer',
  /** `/settle` is answered success with a random transaction hash that never mines; nothing is forwarded. */
  'settle-unmined-hash',
  /**
   * `/settle` is refused definitely, nothing forwarded, no money moved: HTTP 200 `{success: false,
   * errorReason: "invalid_exact_evm_insufficient_balance"}` — a facilitator that refuses at settle
   * what the server verified (its balance moved in between, or its `/verify` and `/settle` disagree).
   */
  'settle-refused',
  /** `/supported` is forwarded after `slowSupportedMs`. */
  'slow-supported',
  /** Answered 200 with a truncated JSON body, nothing forwarded (`operations`, default all three). */
  'garbage-json',
  /** The connection is reset before anything is forwarded (`operations`, default all three). */
  'connection-reset',
  /**
   * Every request is held, nothing forwarded, until the mode changes (then the held requests are
   * forwarded, as a frozen process resumes) or the proxy is closed or killed (they are lost).
   */
  'frozen',
] as const;

export type FacilitatorFaultMode = (typeof FACILITATOR_FAULT_MODES)[number];

/** The operations a proxy tells apart (by the last segment of the path). */
export const FACILITATOR_OPERATIONS: readonly FacilitatorOperation[] = ['verify', 'settle', 'supported'];

/** A mode with the operations it applies to (only `garbage-json`, `connection-reset` and `frozen` take a subset). */
export interface FacilitatorFaultSetting {
  mode: FacilitatorFaultMode;
  /** Default: every operation for the modes that take a subset. */
  operations?: readonly FacilitatorOperation[];
}

const OPERATION_OF_MODE: Partial<Record<FacilitatorFaultMode, FacilitatorOperation>> = {
  'verify-timeout': 'verify',
  'settle-answer-dropped': 'settle',
  'settle-answer-hung': 'settle',
  'settle-500-after-transfer': 'settle',
  'settle-failed-after-transfer': 'settle',
  'settle-failed-400-after-transfer': 'settle',
  'settle-unmined-hash': 'settle',
  'settle-refused': 'settle',
  'slow-supported': 'supported',
};

function isMode(value: unknown): value is FacilitatorFaultMode {
  return typeof value === 'string' && (FACILITATOR_FAULT_MODES as readonly string[]).includes(value);
}

/**
 * Checks a mode setting (as given to `setMode` or sent to the control endpoint).
 * @throws TypeError naming the problem.
 */
export function toFaultSetting(value: unknown): Required<FacilitatorFaultSetting> {
  const setting = (typeof value === 'string' ? { mode: value } : value) as
    | { mode?: unknown; operations?: unknown }
    | undefined;
  if (!setting || typeof setting !== 'object' || !isMode(setting.mode)) {
    throw new TypeError(
      `mode must be one of ${FACILITATOR_FAULT_MODES.join(', ')} (got ${JSON.stringify(setting?.mode ?? value)})`,
    );
  }
  const fixed = OPERATION_OF_MODE[setting.mode];
  const own = setting.mode === 'pass' ? [] : fixed ? [fixed] : undefined;
  if (setting.operations !== undefined) {
    // A fixed mode takes back its own list (a setting read from `stats()` round-trips).
    if (own !== undefined && JSON.stringify(setting.operations) !== JSON.stringify(own))
      throw new TypeError(`mode ${setting.mode} does not take operations`);
    if (
      !Array.isArray(setting.operations) ||
      setting.operations.some((op) => !FACILITATOR_OPERATIONS.includes(op as FacilitatorOperation))
    ) {
      throw new TypeError(`operations must be a list of ${FACILITATOR_OPERATIONS.join(', ')}`);
    }
  }
  const operations = own ?? [...((setting.operations as FacilitatorOperation[]) ?? FACILITATOR_OPERATIONS)];
  return { mode: setting.mode, operations };
}

/** The operation a request path names (its last segment), or `other`. */
export function operationOf(path: string): FacilitatorOperation | 'other' {
  const last = path.replace(/\/+$/, '').split('/').pop();
  return last === 'verify' || last === 'settle' || last === 'supported' ? last : 'other';
}
