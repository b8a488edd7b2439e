import type { AuditLevel } from '../types';
import type { AuditChain, Authorization } from './chain';
import type { FacilitatorEndpoint } from './endpoint';
import type { AuditPayment, PaymentDefects } from './payments';

/** What a facilitator audit needs beyond the facilitator and the chain; without it, it is skipped. */
export type FacilitatorAuditNeed =
  /** `/supported` lists `exact` with x402Version 1 on the chain's v1 network name. */
  'v1';

/** What every facilitator audit receives. */
export interface FacilitatorAuditContext {
  facilitator: FacilitatorEndpoint;
  chain: AuditChain;
  /** A fresh v2 payment (new nonce) from the first payer, with optional defects. */
  pay(defects?: PaymentDefects): Promise<AuditPayment>;
  /** A fresh v1 payment on the chain's v1 network name. */
  payV1(defects?: PaymentDefects): Promise<AuditPayment>;
  /**
   * Uses the payment's authorization on chain: from the submitter key when there is one, else
   * through the facilitator's own `/settle`. Resolves once the token counts it as used.
   */
  useOnChain(payment: AuditPayment): Promise<void>;
  /** The parsed `/supported` answer of the run's first call (`undefined` if it was not JSON). */
  supported: SupportedView | undefined;
}

/** `/supported`, read leniently (the FSUP audits judge its shape). */
export interface SupportedView {
  kinds: Array<{ x402Version?: unknown; scheme?: unknown; network?: unknown }>;
  signers: Record<string, unknown>;
}

/** One facilitator audit: a stable id, an RFC 2119 sentence and the check. */
export interface FacilitatorAudit {
  /** Stable id, e.g. `FVER-01`; never reused for another rule. */
  readonly id: string;
  readonly level: AuditLevel;
  /** Which endpoint it judges (the report groups by it). */
  readonly endpoint: 'supported' | 'verify' | 'settle';
  readonly sentence: string;
  readonly needs?: readonly FacilitatorAuditNeed[];
  /** Throws an `AuditFailure` when the facilitator breaks the rule. */
  run(ctx: FacilitatorAuditContext): Promise<void>;
}

export type { Authorization };
