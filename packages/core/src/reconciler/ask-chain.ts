// Used by gate step 8 of 8 (judge-refusal) and the reconciler: what the chain says about a payment.
import type { LedgerEntry } from '../ledger/types';
import {
  type PaymentPayload,
  type PaymentPayloadV1,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  V1_NETWORKS,
} from '../protocol/schemas';
import type { ReconcileResult, SchemeServer } from '../scheme';

/** What the chain is asked about: one payment, in v2 form, with the scheme that reads it. */
export interface ChainQuestion {
  scheme: SchemeServer;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** End of the authorization's validity, unix seconds. */
  validBefore: number;
  /** Transaction hash already known for the settlement, if any. */
  transaction?: string | undefined;
}

/**
 * Asks the chain what happened to a payment whose settlement outcome is unknown, through its
 * scheme's chain reader. Never throws: a scheme without a chain reader, or one that fails,
 * answers `unknown` (the entry stays uncertain, never "not paid"). Only the chain reader says
 * `expired` (by the chain's time); this server's clock decides nothing here.
 */
export async function askChain(question: ChainQuestion, nowMs: number): Promise<ReconcileResult> {
  const { scheme } = question;
  const now = Math.floor(nowMs / 1000);
  if (!scheme.reconcile) {
    return {
      status: 'unknown',
      message: `the ${scheme.scheme} scheme has no chain reader for ${question.requirements.network}`,
    };
  }
  let answer: ReconcileResult;
  try {
    answer = await scheme.reconcile({
      payload: question.payload,
      requirements: question.requirements,
      ...(question.transaction ? { transaction: question.transaction } : {}),
      now,
    });
  } catch (error) {
    answer = { status: 'unknown', message: error instanceof Error ? error.message : 'reconcile failed' };
  }
  // Expiry is the chain's call (its block time past validBefore, a few blocks deep), never this
  // server's clock: a transfer mined just before validBefore may be reported late.
  return answer;
}

/**
 * The question to ask about a ledger entry (the background reconciler has no request): its
 * stored payload and requirements in v2 form, and the scheme that serves them. `undefined` when
 * no scheme serves the entry's requirements or they do not parse.
 */
export function questionFor(entry: LedgerEntry, schemes: readonly SchemeServer[]): ChainQuestion | undefined {
  const requirements = toV2Requirements(entry.requirements);
  if (!requirements) return undefined;
  const scheme = schemes.find(
    (s) => s.scheme === requirements.scheme && s.supportsNetwork(requirements.network),
  );
  if (!scheme) return undefined;
  const stored = entry.payload as Partial<PaymentPayload | PaymentPayloadV1> | undefined;
  if (!stored || typeof stored !== 'object' || typeof stored.payload !== 'object' || stored.payload === null)
    return undefined;
  const payload: PaymentPayload =
    stored.x402Version === 2
      ? (stored as PaymentPayload)
      : {
          x402Version: 2,
          resource: { url: entry.resource },
          accepted: requirements,
          payload: stored.payload as Record<string, unknown>,
        };
  return {
    scheme,
    payload,
    requirements,
    validBefore: entry.validBefore,
    ...(entry.transaction ? { transaction: entry.transaction } : {}),
  };
}

/** v2 requirements from stored ones (a v1 requirement's network name becomes its CAIP-2 id). */
function toV2Requirements(stored: unknown): PaymentRequirements | undefined {
  if (!stored || typeof stored !== 'object') return undefined;
  const value = stored as Partial<PaymentRequirements & PaymentRequirementsV1>;
  if (typeof value.scheme !== 'string' || typeof value.network !== 'string') return undefined;
  if (typeof value.amount === 'string') return value as PaymentRequirements;
  if (typeof value.maxAmountRequired !== 'string') return undefined;
  const network = V1_NETWORKS[value.network] ?? value.network;
  return {
    scheme: value.scheme,
    network,
    amount: value.maxAmountRequired,
    asset: String(value.asset ?? ''),
    payTo: String(value.payTo ?? ''),
    maxTimeoutSeconds: Number(value.maxTimeoutSeconds ?? 0),
    extra: (value.extra ?? {}) as Record<string, unknown>,
  };
}
