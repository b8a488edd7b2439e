import type { PotentialSavings } from './fee-math';
import { potentialSavings, projectedBlockCount } from './fee-math';
import type { FeeFiguresInput, FeeTiers } from './types';

/** The `data` figures shared by FeePreview and FeeDecision (docs/fee-service-contract.md#feepreview). */
export interface DerivedFeeFigures {
  fee_rates_sat_vb: FeeTiers;
  mempool: {
    vsize: number;
    transaction_count: number;
    projected_block_count: number;
  };
  potential_savings: PotentialSavings;
}

/**
 * Computes the figures every fee body publishes from a validated snapshot. Pure: the same
 * snapshot always yields the same figures.
 */
export function deriveFeeFigures(snapshot: FeeFiguresInput): DerivedFeeFigures {
  const { tiers, mempool } = snapshot;
  return {
    fee_rates_sat_vb: {
      fastest: tiers.fastest,
      half_hour: tiers.half_hour,
      hour: tiers.hour,
      economy: tiers.economy,
      minimum: tiers.minimum,
    },
    mempool: {
      vsize: mempool.vsize,
      transaction_count: mempool.count,
      projected_block_count: projectedBlockCount(mempool.vsize),
    },
    potential_savings: potentialSavings(tiers.fastest, tiers.economy),
  };
}
