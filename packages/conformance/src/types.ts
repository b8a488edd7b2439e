import type { PaymentRequired, PaymentRequirements } from '@tollbooth/core';

/** RFC 2119 level of an audit. */
export type AuditLevel = 'MUST' | 'SHOULD';

/**
 * Where a rule comes from: `x402`, the x402 specification (or, where it is silent, what the
 * official packages do and clients rely on); `tollbooth`, Tollbooth's own profile (its error
 * vocabulary, HEAD and CORS handling, ledger guarantees), which other x402 servers need not follow.
 */
export type AuditProfile = 'x402' | 'tollbooth';

/**
 * What a server answers a settled payment's payload sent again (docs/ledger.md#replay-a-stance):
 * `stored-answer`, the stored response; `strict`, 402 payment_already_used once it was answered.
 */
export type ReplayMode = 'stored-answer' | 'strict';

/** Paths of the target server the audits use; a `undefined` path skips the audits that need it. */
export interface AuditPaths {
  /** A paid route whose handler answers 200. */
  paid: string;
  /** A second paid route with the same price (a payment settled for `paid` must not buy it). */
  other?: string;
  /** A free route. */
  free?: string;
  /** A paid route whose handler answers 422. */
  failing?: string;
  /** A paid route whose handler throws. */
  throwing?: string;
  /** A paused paid route. */
  paused?: string;
  /** A retired paid route. */
  retired?: string;
  /** A paid route that only accepts its canonical URL (no query string). */
  canonical?: string;
}

/** What a payment built by the suite may change. */
export interface PaymentOverrides {
  /** Fields patched into the copy of `accepts[0]`. */
  accepted?: Partial<PaymentRequirements>;
  /** Fields patched into the authorization (after signing, unless `resign`). */
  authorization?: Record<string, string>;
  /** Sign again after the authorization patch (a well-signed authorization with other terms). */
  resign?: boolean;
  /** Replaces the signature. */
  signature?: string;
  /** Replaces the top-level `x402Version`. */
  x402Version?: number;
}

/** How a controllable target is driven: its scripted doubles and a payment builder. */
export interface AuditControl {
  /** Builds a `PAYMENT-SIGNATURE` value that pays `challenge` (with optional defects). */
  pay(challenge: PaymentRequired, overrides?: PaymentOverrides): string;
  /** The facilitator double the target's gate uses. */
  facilitator: {
    /** What `/verify` answers next. Default `valid`. */
    verifyAnswer: 'valid' | 'invalid' | 'insufficient' | 'unreachable';
    /**
     * What `/settle` answers next. Default `success`. `failure` is a refusal naming a transaction
     * that reverted; the gate judges it by `chain` (docs/ledger.md "A refusal is judged by the chain").
     */
    settleAnswer: 'success' | 'failure' | 'timeout';
    readonly calls: { verify: number; settle: number };
  };
  /** What the scheme answers when asked whether an uncertain settlement landed on chain. */
  chain: 'settled' | 'unsettled' | 'unknown';
  /** How many times each route's handler ran. */
  runs(route: keyof AuditPaths): number;
}

/** What every audit receives. */
export interface AuditContext {
  /** Origin of the target, e.g. `http://127.0.0.1:4021`. */
  baseUrl: string;
  fetch: typeof fetch;
  paths: AuditPaths;
  /** Present when the suite built the target (see `createAuditFixture`). */
  control?: AuditControl;
  /** The replay mode the target is audited in. Default `stored-answer`. */
  replay?: ReplayMode;
  /**
   * How 429 answers are handled: each is waited out (its Retry-After, else 1 s doubling) and the
   * request sent again, until the audit has waited `maxWaitMs` in all; then the audit is reported
   * `rate_limited`. Default: no waiting.
   */
  rateLimit?: { maxWaitMs: number; waitedMs: number; onWait?(ms: number, what: string): void };
}

/** One audit: a stable id, an RFC 2119 sentence and the check. */
export interface Audit {
  /** Stable id, e.g. `A402-01`; never reused for another rule. */
  readonly id: string;
  readonly level: AuditLevel;
  readonly profile: AuditProfile;
  /** The rule, e.g. `MUST answer 402 with PAYMENT-REQUIRED when no payment header is sent`. */
  readonly sentence: string;
  /** `control`: needs the scripted doubles; `server`: runs against any server given its paths. */
  readonly needs: 'server' | 'control';
  /** Paths the audit uses besides `paid` (skipped when the target lacks one). */
  readonly uses?: readonly (keyof AuditPaths)[];
  /** The replay mode the rule is for (skipped for a target audited in the other); none: both. */
  readonly replay?: ReplayMode;
  /** Throws an `AuditFailure` when the target breaks the rule. */
  run(ctx: AuditContext): Promise<void>;
}
