import { deriveFeeFigures } from '../../../domain/derived';
import type { SnapshotReading } from '../../../domain/types';
import { buildSnapshotMeta } from '../../shared/snapshot-meta';
import { FEE_DECISION_CURRENCY, FEE_DECISION_OFFER, FEE_DECISION_USDC } from '../now/offer';
import type { FeePreview } from './schema';

/**
 * Builds the FeePreview body (docs/fee-service-contract.md#feepreview) from the current snapshot reading.
 * @param options.reading what the snapshot service's `current(now)` returned
 * @param options.network CAIP-2 network of the paid decision, e.g. `eip155:8453`
 * @example buildFeePreview({ reading: service.current(Date.now()), network: 'eip155:8453' })
 */
export function buildFeePreview(options: { reading: SnapshotReading; network: string }): FeePreview {
  const { reading, network } = options;
  return {
    data: {
      ...deriveFeeFigures(reading.snapshot),
      paid_resource: {
        method: FEE_DECISION_OFFER.method,
        path: FEE_DECISION_OFFER.path,
        price: `${FEE_DECISION_USDC} ${FEE_DECISION_CURRENCY}`,
        network,
      },
    },
    meta: buildSnapshotMeta(reading),
  };
}
