import * as z from 'zod';

/**
 * Wire schemas of the fee figures every fee body publishes (the preview's, the decision's and the
 * landscape's: docs/fee-service-contract.md#feepreview). The bodies themselves are in their
 * resources' folders (`src/resources/fees/preview/schema.ts`, `src/resources/fees/now/schema.ts`).
 * They drive the OpenAPI description, hence a `.describe()` on every field.
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
