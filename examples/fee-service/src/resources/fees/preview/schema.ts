import * as z from 'zod';
import { FeeRatesSchema, MempoolFiguresSchema, PotentialSavingsSchema } from '../../../domain/schemas';
import { type FeeSchemaConstants, snapshotMetaShape } from '../../shared/snapshot-meta';
import { FEE_DECISION_CURRENCY, FEE_DECISION_OFFER, FEE_DECISION_USDC } from '../now/offer';

/** The paid decision the preview advertises: its offer (`../now/offer.ts`) on this deployment's network. */
export const PaidResourceSchema = z
  .strictObject({
    method: z.literal(FEE_DECISION_OFFER.method).describe('HTTP method of the paid timing decision.'),
    path: z.literal(FEE_DECISION_OFFER.path).describe('Path of the paid timing decision.'),
    price: z
      .literal(`${FEE_DECISION_USDC} ${FEE_DECISION_CURRENCY}`)
      .describe('Price of one timing decision.'),
    network: z.string().min(1).describe('CAIP-2 network the payment is made on, e.g. eip155:8453.'),
  })
  .describe('The paid send-or-wait decision this preview advertises.');

/**
 * The FeePreview body (docs/fee-service-contract.md#feepreview), with the deployment's constant
 * labels as literals when given (for the published OpenAPI description).
 */
export function feePreviewSchema(constants: FeeSchemaConstants = {}) {
  return z
    .strictObject({
      data: z
        .strictObject({
          fee_rates_sat_vb: FeeRatesSchema,
          mempool: MempoolFiguresSchema,
          potential_savings: PotentialSavingsSchema,
          paid_resource: PaidResourceSchema,
        })
        .describe('Fee rates, mempool figures and illustrative savings.'),
      meta: z.strictObject(snapshotMetaShape(constants)).describe('Snapshot provenance and freshness.'),
    })
    .describe('Free fee preview (GET /api/v1/fees/preview).');
}

/** FeePreview body with the deployment constants as plain strings. */
export const FeePreviewSchema = feePreviewSchema();
export type FeePreview = z.infer<typeof FeePreviewSchema>;
