import { type ErrorCodeSpec, errorResult } from '../../http/respond';
import type { RouteResult } from '../../http/types';
import { type CurrentSnapshot, NoValidatedSnapshotError, type SnapshotService } from '../../snapshot/service';

/** The code every resource that serves from the snapshot answers when none can be served (503, retry later). */
export const NO_VALIDATED_SNAPSHOT: ErrorCodeSpec = {
  status: 503,
  retryable: true,
  description: 'No validated fee snapshot is recent enough to serve.',
};

/** Seconds a client should wait before asking again when no snapshot can be served. */
export const NO_SNAPSHOT_RETRY_AFTER_SECONDS = 10;

/**
 * The current snapshot, or the 503 Error the contract prescribes (docs/fee-service-contract.md#get-apiv1feespreview) when none can be served. The request
 * id may be given as a function: it is then asked only for the error.
 */
export function readSnapshot(
  snapshots: SnapshotService,
  requestId: string | (() => string),
): { reading: CurrentSnapshot } | { error: RouteResult } {
  try {
    return { reading: snapshots.current() };
  } catch (error) {
    if (!(error instanceof NoValidatedSnapshotError)) throw error;
    return {
      error: errorResult({
        status: 503,
        code: 'no_validated_snapshot',
        requestId: typeof requestId === 'string' ? requestId : requestId(),
        retryable: true,
        message:
          error.reason === 'none'
            ? 'no validated fee snapshot is available yet'
            : 'no validated fee snapshot is recent enough to serve (the last one is older than 120 s)',
        headers: { 'retry-after': String(NO_SNAPSHOT_RETRY_AFTER_SECONDS) },
      }),
    };
  }
}
