import type { FreeRoute } from '@tollbooth/core';
import { buildFeePreview } from '../domain/builders';
import { EncodedJson, requestIdOf } from '../http/respond';
import type { RouteContext, RouteResult } from '../http/types';
import type { CurrentSnapshot } from '../snapshot/service';
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

/** The headers of an encoded 200 preview, in the order the mounts write them for a JSON result. */
const ENCODED_PREVIEW_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': PREVIEW_CACHE_CONTROL,
  'content-type': 'application/json; charset=utf-8',
});

/**
 * {@link previewHandler} with its 200 answer already encoded: the preview document only changes
 * with the snapshot, its age in whole seconds and its staleness, so its JSON text is built once
 * per such reading and shared by every request until the next one (the 503 is not cached). The
 * bytes and headers are those the mounts would write for `previewHandler`'s JSON result.
 */
export function createPreviewResponder(deps: ResourceDeps): (context: RouteContext) => RouteResult {
  let last: { reading: CurrentSnapshot; result: RouteResult } | undefined;
  return (context) => {
    const read = readSnapshot(deps.snapshots, () => context.requestId || requestIdOf(context.header));
    if ('error' in read) return read.error;
    const { reading } = read;
    if (
      last === undefined ||
      last.reading.snapshot !== reading.snapshot ||
      last.reading.age_seconds !== reading.age_seconds ||
      last.reading.stale !== reading.stale
    ) {
      const body = buildFeePreview({ reading, network: deps.terms.network });
      last = {
        reading,
        result: {
          status: 200,
          headers: ENCODED_PREVIEW_HEADERS,
          body: new EncodedJson(JSON.stringify(body)),
        },
      };
    }
    return last.result;
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
