import { SERVICE_ERROR_CODES } from '../../../http/respond';
import { defineResource } from '../../kit';
import { createPreviewResponder } from './handler';

/**
 * GET /api/v1/fees/preview (free): fee rates, mempool figures, illustrative savings and the offer
 * of the paid decision (docs/fee-service-contract.md#feepreview). Its bytes are built once per
 * snapshot reading; a query string is ignored (free endpoints get cache busters).
 */
export const feePreview = defineResource({
  method: 'GET',
  path: '/api/v1/fees/preview',
  description:
    'Free fee preview: fee rates, mempool figures, illustrative savings and the paid decision offer',
  discovery: { category: 'fees', keywords: ['bitcoin', 'fees', 'preview'], operationId: 'getFeePreview' },
  output: (env) => env.schemas.FeePreview,
  errors: { no_validated_snapshot: SERVICE_ERROR_CODES.no_validated_snapshot },
  needs: ['snapshots'],
  createHandler(env) {
    const respond = createPreviewResponder({
      snapshots: env.capabilities.snapshots!,
      network: env.config.payment.network,
    });
    return ({ request }) => respond(request);
  },
});
