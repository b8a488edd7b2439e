import * as z from 'zod';
import {
  ALGORITHM_VERSION,
  DECISIONS,
  PAID_RESOURCE_METHOD,
  PAID_RESOURCE_PATH,
  PAID_RESOURCE_PRICE,
  PAYMENT_AMOUNT,
  PAYMENT_CURRENCY,
  REASON_CODES,
  SCHEMA_VERSION,
} from './constants';

/**
 * Wire schemas of the two fee bodies (docs/fee-service-contract.md#feepreview and #feedecision). They are the only definition of these
 * types and drive the OpenAPI description, hence a `.describe()` on every field.
 */

const nonNegative = (description: string) => z.number().min(0).describe(description);

export const FeeRatesSchema = z
  .strictObject({
    fastest: nonNegative('Rate for the next block, sat/vB.'),
    half_hour: nonNegative('Rate for confirmation within about three blocks (half an hour), sat/vB.'),
    hour: nonNegative('Rate for confirmation within about six blocks (an hour), sat/vB.'),
    economy: nonNegative('Low-priority rate for confirmation within about a day, sat/vB.'),
    minimum: nonNegative('Lowest rate the upstream mempool accepts, sat/vB.'),
  })
  .describe('Fee rates in sat/vB from the validated upstream snapshot. Illustrations, not guarantees.');

export const MempoolFiguresSchema = z
  .strictObject({
    vsize: nonNegative('Total virtual size of the unconfirmed transactions, vB.'),
    transaction_count: nonNegative('Number of unconfirmed transactions.'),
    projected_block_count: nonNegative('Blocks the mempool fills: ceil(vsize / 1,000,000), 0 when empty.'),
  })
  .describe('Mempool size figures.');

export const PotentialSavingsSchema = z
  .strictObject({
    sat_vb: nonNegative('fastest − economy, sat/vB.'),
    percent: nonNegative('100 × sat_vb / fastest, rounded to one decimal; 0 when fastest is 0.'),
    at_140_vbytes_sat: nonNegative(
      'ceil(140 × fastest) − ceil(140 × economy): the illustrative saving, in sats, on a 140 vB payment.',
    ),
  })
  .describe('Illustrative saving from waiting for the economy tier instead of the fastest. Not a guarantee.');

export const PaidResourceSchema = z
  .strictObject({
    method: z.literal(PAID_RESOURCE_METHOD).describe('HTTP method of the paid timing decision.'),
    path: z.literal(PAID_RESOURCE_PATH).describe('Path of the paid timing decision.'),
    price: z.literal(PAID_RESOURCE_PRICE).describe('Price of one timing decision.'),
    network: z.string().min(1).describe('CAIP-2 network the payment is made on, e.g. eip155:8453.'),
  })
  .describe('The paid send-or-wait decision this preview advertises.');

/** Per-deployment constants; omitted ones are plain strings in the schema. */
export interface FeeSchemaConstants {
  /** Snapshot format label, ending in `-v1`. */
  snapshotSchema?: string;
  /** Upstream base URL. */
  source?: string;
  /** Name of the payment facilitator. */
  facilitator?: string;
}

function constantString(value: string | undefined, fallback: z.ZodString, description: string) {
  return (value === undefined ? fallback : z.literal(value)).describe(description);
}

function buildMetaShape(constants: FeeSchemaConstants) {
  return {
    snapshot_schema: constantString(
      constants.snapshotSchema,
      z.string().regex(/-v1$/),
      'Fixed label of the upstream mempool snapshot format, ending in -v1.',
    ),
    snapshot_digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/)
      .describe('sha256: + hex SHA-256 of the canonical JSON (sorted keys, no whitespace) of the snapshot.'),
    source: constantString(
      constants.source,
      z.string().min(1),
      'Fixed address of the upstream mempool data provider.',
    ),
    fetched_at: z.iso.datetime({ offset: true }).describe('Time the upstream answered (ISO 8601).'),
    age_seconds: nonNegative('Age of the snapshot at response time, seconds.'),
    stale: z
      .boolean()
      .describe('True when the snapshot is older than 30 s or a newer block was seen; check before use.'),
    algorithm_version: z.literal(ALGORITHM_VERSION).describe('Decision algorithm label.'),
  };
}

/**
 * Builds the FeePreview and FeeDecision schemas, with the deployment's constant labels as literals
 * when given (for the published OpenAPI description).
 */
export function createFeeSchemas(constants: FeeSchemaConstants = {}) {
  const metaShape = buildMetaShape(constants);
  const PreviewMeta = z.strictObject(metaShape).describe('Snapshot provenance and freshness.');
  const FeePreview = z
    .strictObject({
      data: z
        .strictObject({
          fee_rates_sat_vb: FeeRatesSchema,
          mempool: MempoolFiguresSchema,
          potential_savings: PotentialSavingsSchema,
          paid_resource: PaidResourceSchema,
        })
        .describe('Fee rates, mempool figures and illustrative savings.'),
      meta: PreviewMeta,
    })
    .describe('Free fee preview (GET /api/v1/fees/preview).');

  const DecisionMeta = z
    .strictObject({
      ...metaShape,
      schema_version: z.literal(SCHEMA_VERSION).describe('Version of this body schema.'),
      evidence: z
        .enum(['recorded', 'degraded'])
        .describe('recorded for a fresh snapshot, degraded for a fallback (stale) one.'),
      payment: z
        .strictObject({
          amount: z.literal(PAYMENT_AMOUNT).describe('Amount paid, in USDC.'),
          currency: z.literal(PAYMENT_CURRENCY).describe('Currency paid.'),
          facilitator: constantString(
            constants.facilitator,
            z.string().min(1),
            'Name of the payment facilitator that settled the payment.',
          ),
          network: z.string().min(1).describe('CAIP-2 network the payment settled on.'),
          transaction_hash: z
            .string()
            .regex(/^0x[0-9a-fA-F]{64}$/)
            .describe('Hash of the settlement transaction.'),
        })
        .describe('Settlement receipt of the payment for this decision.'),
    })
    .describe('Snapshot provenance, freshness, evidence and payment.');

  const FeeDecision = z
    .strictObject({
      data: z
        .strictObject({
          fee_rates_sat_vb: FeeRatesSchema,
          mempool: MempoolFiguresSchema,
          potential_savings: PotentialSavingsSchema,
          decision: z.enum(DECISIONS).describe('send now, or wait for a cheaper rate.'),
          reason_codes: z
            .array(z.enum(REASON_CODES))
            .min(1)
            .max(2)
            .refine((codes) => new Set(codes).size === codes.length, 'reason codes must be unique')
            .describe('Why: one savings code, plus heavy_backlog when the backlog is 8 blocks or more.'),
        })
        .describe('Fee figures and the deterministic send-wait-v1 decision.'),
      meta: DecisionMeta,
      limitations: z.array(z.string()).describe('What the decision does not promise.'),
    })
    .describe('Paid send-or-wait timing decision (GET /api/v1/fees/now).');

  return { FeePreview, FeeDecision };
}

const defaults = createFeeSchemas();
/** FeePreview body (docs/fee-service-contract.md#feepreview) with the deployment constants as plain strings. */
export const FeePreviewSchema = defaults.FeePreview;
/** FeeDecision body (docs/fee-service-contract.md#feedecision) with the deployment constants as plain strings. */
export const FeeDecisionSchema = defaults.FeeDecision;
export type FeePreview = z.infer<typeof FeePreviewSchema>;
export type FeeDecision = z.infer<typeof FeeDecisionSchema>;
