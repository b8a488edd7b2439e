import type { FacilitatorFaultProxyStats, FacilitatorFaultSetting } from '@tollbooth/facilitator';
import type { AuditChain } from '../facilitator/chain';
import type { AuditLevel, AuditProfile, ReplayMode } from '../types';

/** Switches the fault proxy between the server and its facilitator (in this process or another). */
export interface FaultSwitch {
  setMode(setting: FacilitatorFaultSetting): unknown;
  /**
   * What the proxy has seen (the kit's proxy and `createFacilitatorFaultControl` both have it).
   * With it, an audit whose fault the server never met (a route that settles without calling
   * `/verify` meets no `/verify` fault) is reported `skipped`, its payment still checked.
   */
  stats?(): FacilitatorFaultProxyStats | Promise<FacilitatorFaultProxyStats>;
}

/**
 * What the server may answer while the fault plays:
 * - `served`: the fault must not matter (the paid answer, its transfer on chain);
 * - `unpaid`: the facilitator could not verify: no paid answer, nothing moved;
 * - `uncertain`: settlement may or may not have happened: a retryable 5xx, or the paid answer
 *   only if its transfer is on chain; never a 2xx on the facilitator's word, never a refusal (4xx);
 * - `refused`: the facilitator refused the settlement definitely: 402, no paid answer, nothing
 *   moved, and the exact payload retried is neither served nor charged.
 */
export type FaultExpectation = 'served' | 'unpaid' | 'uncertain' | 'refused';

/** One fault-proxy audit: the fault, what the first answer may be, and the rule. */
export interface FaultAudit {
  /** Stable id, e.g. `AFLT-03`; never reused for another rule. */
  readonly id: string;
  readonly level: AuditLevel;
  readonly profile: AuditProfile;
  readonly sentence: string;
  /** The fault the proxy plays during the first request (`pass`: none). */
  readonly fault: FacilitatorFaultSetting;
  readonly expect: FaultExpectation;
  /**
   * A replay audit (docs/ledger.md#replay-a-stance): the payload is sent five times at once with
   * the facilitator healthy, then once more, and judged by this mode; skipped for a server audited
   * in the other.
   */
  readonly replay?: ReplayMode;
}

/** What the fault audits run with. */
export interface FaultAuditContext {
  /** The server's origin and its paid path. */
  url: string;
  paidPath: string;
  chain: AuditChain;
  faults: FaultSwitch;
  fetch: typeof fetch;
  /** How long the server may take to serve the retried payload once the fault is gone. Default 30 000 ms. */
  recoveryMs: number;
  /** The replay mode the server is audited in. */
  replay: ReplayMode;
}
