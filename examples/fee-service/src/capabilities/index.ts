import type { FacilitatorClient, SchemeServer } from '@tollbooth/core';
import type { SnapshotService } from '../snapshot/service';
import type { BitcoinUpstreams } from './bitcoin';
import type { LanguageModel } from './language-model/model';
import type { Observatory } from './observatory/observatory';
import type { PaymentTerms } from './payment-terms';

export * from './bitcoin';
export * from './payment-terms';

/**
 * What resources share, built once per service (`startFeeService` in `src/service.ts`). A resource
 * names the capabilities it needs (`needs` in its declaration); when one is absent from this
 * deployment, or only planned, the resource is published `paused`: 503 without a challenge, left
 * out of the catalog and listed under `pausedEndpoints` in `/.well-known/x402`.
 *
 * To add a capability: give it a key here and a module under `src/capabilities/`, build it in
 * the `capabilities` object of `startFeeService`, and remove its name from {@link PlannedCapability}
 * if it was planned.
 */
export interface Capabilities {
  /** Validated fee snapshots of the configured upstream (the preview's and the decision's source). */
  snapshots: SnapshotService;
  /** Every configured Bitcoin upstream: mempool.space REST, Esplora, Bitcoin Core RPC. */
  bitcoin: BitcoinUpstreams;
  /** The payment terms, the facilitator and the schemes the payment gate uses. */
  payments: PaymentsCapability;
  /**
   * The fee observatory's recorded history and scores (`src/capabilities/observatory/observatory.ts`): the
   * scoreboard, block statistics and estimates, and a hit rate per source and horizon for other
   * resources (the AI fee advice's confidence).
   */
  history: Observatory;
  /**
   * An OpenAI-compatible model (`AI_MODEL_BASE_URL`, `AI_MODEL`). Optional everywhere: the AI
   * resources answer deterministically without it and fall back to that when it fails.
   */
  languageModel: LanguageModel;
}

/** The gate's payment side, for resources that look at payments themselves (the x402 demo). */
export interface PaymentsCapability {
  terms: PaymentTerms;
  facilitator: FacilitatorClient;
  /** Fixed facilitator name reported in `meta.payment.facilitator`. */
  facilitatorName: string;
  schemes: readonly SchemeServer[];
}

/**
 * Capabilities that resources already name but that no module builds yet. A resource needing one
 * is published paused with the reason given here.
 */
export const PLANNED_CAPABILITIES = {} as const;
export type PlannedCapability = keyof typeof PLANNED_CAPABILITIES;

/** A capability a resource may name in `needs`. */
export type CapabilityName = keyof Capabilities | PlannedCapability;

/** The capabilities of one deployment: each one present or absent. */
export type CapabilitySet = Partial<Capabilities>;

/** The capabilities of `needs` that `capabilities` lacks (planned ones always lack). */
export function missingCapabilities(
  needs: readonly CapabilityName[],
  capabilities: CapabilitySet,
): CapabilityName[] {
  return needs.filter(
    (name) => name in PLANNED_CAPABILITIES || capabilities[name as keyof Capabilities] === undefined,
  );
}
