import * as z from 'zod';
import { DECISIONS, REASON_CODES } from '../../../domain/constants';
import { FeeRatesSchema, MempoolFiguresSchema, PotentialSavingsSchema } from '../../../domain/schemas';
import { constantString, type FeeSchemaConstants, snapshotMetaShape } from '../../shared/snapshot-meta';
import { FEE_DECISION_CURRENCY, FEE_DECISION_USDC } from './offer';

/** The schema version of the decision meta (docs/fee-service-contract.md#versioning). */
export const SCHEMA_VERSION = '2026-08-06';

/**
 * The FeeDecision body (docs/fee-service-contract.md#feedecision), with the deployment's constant
 * labels as literals when given (for the published OpenAPI description).
 */
export function feeDecisionSchema(constants: FeeSchemaConstants = {}) {
  const DecisionMeta = z
    .strictObject({
      ...snapshotMetaShape(constants),
      schema_version: z.literal(SCHEMA_VERSION).describe('Version of this body schema.'),
      evidence: z
        .enum(['recorded', 'degraded'])
        .describe('recorded for a fresh snapshot, degraded for a fallback (stale) one.'),
      payment: z
        .strictObject({
          amount: z.literal(FEE_DECISION_USDC).describe('Amount paid, in USDC.'),
          currency: z.literal(FEE_DECISION_CURRENCY).describe('Currency paid.'),
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

  return z
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
}

/** FeeDecision body with the deployment constants as plain strings. */
export const FeeDecisionSchema = feeDecisionSchema();
export type FeeDecision = z.infer<typeof FeeDecisionSchema>;
