import { EncodedJson, requestIdOf } from '../../../http/respond';
import type { RouteContext, RouteResult } from '../../../http/types';
import type { CurrentSnapshot, SnapshotService } from '../../../snapshot/service';
import { readSnapshot } from '../../shared/snapshot-reading';
import { buildFeePreview } from './build';

/** What the preview reads: the snapshots and the network of the paid decision it advertises. */
export interface PreviewSources {
  snapshots: SnapshotService;
  /** CAIP-2 network of the paid decision, e.g. `eip155:8453`. */
  network: string;
}

/** How long a shared cache may keep a preview: well inside the 30 s fresh window (docs/fee-service-contract.md#limits). */
export const PREVIEW_CACHE_CONTROL = 'public, max-age=5';

/** Answers the FeePreview (docs/fee-service-contract.md#feepreview), or 503 Error when no validated snapshot can be served. */
export function previewHandler(context: RouteContext, sources: PreviewSources): RouteResult {
  const read = readSnapshot(sources.snapshots, () => context.requestId || requestIdOf(context.header));
  if ('error' in read) return read.error;
  return {
    status: 200,
    headers: { 'cache-control': PREVIEW_CACHE_CONTROL },
    body: buildFeePreview({ reading: read.reading, network: sources.network }),
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
export function createPreviewResponder(sources: PreviewSources): (context: RouteContext) => RouteResult {
  let last: { reading: CurrentSnapshot; result: RouteResult } | undefined;
  return (context) => {
    const read = readSnapshot(sources.snapshots, () => context.requestId || requestIdOf(context.header));
    if ('error' in read) return read.error;
    const { reading } = read;
    if (
      last === undefined ||
      last.reading.snapshot !== reading.snapshot ||
      last.reading.age_seconds !== reading.age_seconds ||
      last.reading.stale !== reading.stale
    ) {
      const body = buildFeePreview({ reading, network: sources.network });
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
