import type { FreeRoute } from '@tollbooth/core';
import { buildFeePreview } from '../domain/builders';
import { requestIdOf } from '../http/respond';
import type { RouteContext, RouteResult } from '../http/types';
import { readSnapshot } from './snapshot-reading';
import type { ResourceDeps } from './types';

/** GET /api/v1/fees/preview (free, seed 4.1). */
export const FEE_PREVIEW_PATH = '/api/v1/fees/preview';

/** How long a shared cache may keep a preview: well inside the 30 s fresh window (seed section 8). */
export const PREVIEW_CACHE_CONTROL = 'public, max-age=5';

/** Answers the FeePreview (seed 2.1), or 503 Error when no validated snapshot can be served. */
export function previewHandler(context: RouteContext, deps: ResourceDeps): RouteResult {
  const read = readSnapshot(deps.snapshots, () => context.requestId || requestIdOf(context.header));
  if ('error' in read) return read.error;
  return {
    status: 200,
    headers: { 'cache-control': PREVIEW_CACHE_CONTROL },
    body: buildFeePreview({ reading: read.reading, network: deps.terms.network }),
  };
}

/** The preview's OpenAPI entry (a free operation). */
export function previewOpenApiRoute(deps: ResourceDeps): FreeRoute {
  return {
    method: 'GET',
    path: FEE_PREVIEW_PATH,
    summary: 'Free fee preview: fee rates, mempool figures, illustrative savings and the paid decision offer',
    operationId: 'getFeePreview',
    tags: ['fees'],
    output: deps.schemas.FeePreview,
    errorStatuses: [503],
  };
}
