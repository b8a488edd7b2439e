import { defineResource, perEnvironment } from '../../kit';
import { feeSchemaConstantsOf } from '../../shared/snapshot-meta';
import { NO_VALIDATED_SNAPSHOT } from '../../shared/snapshot-reading';
import { createPreviewResponder } from './handler';
import { feePreviewSchema } from './schema';

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
  output: perEnvironment((env) => feePreviewSchema(feeSchemaConstantsOf(env))),
  errors: { no_validated_snapshot: NO_VALIDATED_SNAPSHOT },
  needs: ['snapshots'],
  tool: true,
  createHandler(env) {
    const respond = createPreviewResponder({
      snapshots: env.capabilities.snapshots!,
      network: env.config.payment.network,
    });
    return ({ request }) => respond(request);
  },
});
