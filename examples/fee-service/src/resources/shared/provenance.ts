import * as z from 'zod';

/**
 * `meta` of the chain-data resources: the provenance and freshness fields of the decision's
 * (docs/fee-service-contract.md#feedecision), for a reading of several upstreams at once.
 */
export const ChainDataMetaSchema = z
  .strictObject({
    snapshot_digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/)
      .describe('sha256: + hex SHA-256 of the canonical JSON of everything read from the upstreams.'),
    fetched_at: z.iso.datetime({ offset: true }).describe('When the upstreams answered (ISO 8601).'),
    age_seconds: z.number().int().min(0).describe('Age of that reading at response time, seconds.'),
    stale: z
      .boolean()
      .describe(
        'True when the reading is older than 30 s or a newer block was seen since; check before use.',
      ),
    sources: z
      .array(z.string().min(1))
      .min(1)
      .describe('Base URLs of the upstreams read (credentials removed).'),
  })
  .describe('Provenance and freshness of the data.');
export type ChainDataMeta = z.infer<typeof ChainDataMetaSchema>;

/** Seven fee-rate percentiles, by virtual size, sat/vB. */
export const FeeRatePercentilesSchema = z
  .strictObject({
    min: z.number().min(0).describe('Lowest rate, sat/vB.'),
    p10: z.number().min(0).describe('10th percentile by vsize, sat/vB.'),
    p25: z.number().min(0).describe('25th percentile by vsize, sat/vB.'),
    p50: z.number().min(0).describe('Median by vsize, sat/vB.'),
    p75: z.number().min(0).describe('75th percentile by vsize, sat/vB.'),
    p90: z.number().min(0).describe('90th percentile by vsize, sat/vB.'),
    max: z.number().min(0).describe('Highest rate, sat/vB.'),
  })
  .describe('Fee-rate percentiles by virtual size, sat/vB.');
export type FeeRatePercentiles = z.infer<typeof FeeRatePercentilesSchema>;

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Percentiles from a 7-value range (mempool.space's `feeRange`: min, p10, p25, p50, p75, p90,
 * max); a range of another length is read at the same fractions of its positions.
 */
export function percentilesFromRange(range: readonly number[]): FeeRatePercentiles {
  if (range.length === 0) return { min: 0, p10: 0, p25: 0, p50: 0, p75: 0, p90: 0, max: 0 };
  const at = (fraction: number) => round3(range[Math.round(fraction * (range.length - 1))]!);
  if (range.length === 7) {
    const [min, p10, p25, p50, p75, p90, max] = range.map(round3) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    return { min, p10, p25, p50, p75, p90, max };
  }
  return { min: at(0), p10: at(0.1), p25: at(0.25), p50: at(0.5), p75: at(0.75), p90: at(0.9), max: at(1) };
}

/** Percentiles of transactions by virtual size (each transaction weighs its vsize). */
export function percentilesByVsize(txs: ReadonlyArray<{ rate: number; vsize: number }>): FeeRatePercentiles {
  if (txs.length === 0) return percentilesFromRange([]);
  const sorted = [...txs].sort((a, b) => a.rate - b.rate);
  const total = sorted.reduce((sum, tx) => sum + tx.vsize, 0);
  const at = (fraction: number) => {
    const target = total * fraction;
    let acc = 0;
    for (const tx of sorted) {
      acc += tx.vsize;
      if (acc >= target) return round3(tx.rate);
    }
    return round3(sorted.at(-1)!.rate);
  };
  return {
    min: round3(sorted[0]!.rate),
    p10: at(0.1),
    p25: at(0.25),
    p50: at(0.5),
    p75: at(0.75),
    p90: at(0.9),
    max: round3(sorted.at(-1)!.rate),
  };
}
