import { type FeeMarket, marketFromSnapshot } from '../../../analysis/market';
import type { CapabilitySet } from '../../../capabilities';
import type { ProseResult } from '../../../capabilities/language-model/prose';
import type { ServiceConfig } from '../../../config';
import { FeeServiceError } from '../../../domain/errors';
import type { ErrorCodeSpec } from '../../../http/respond';
import type { NamedRateLimit, RouteResult } from '../../../http/types';
import type { CurrentSnapshot } from '../../../snapshot/service';
import { UpstreamNotFoundError } from '../../../upstreams/errors';
import { NO_VALIDATED_SNAPSHOT, readSnapshot } from '../../shared/snapshot-reading';
import { InconsistentUpstreamError } from './chain';

/** Error codes the AI resources answer (each a status ≥ 400: never settled). */
export const AI_ERROR_CODES = {
  unknown_transaction: {
    status: 404,
    retryable: false,
    description:
      'The upstream does not know this transaction; when it was replaced (RBF) the message says by which transaction and X-Replaced-By carries its txid. The payment was not settled.',
  },
  unknown_block: {
    status: 404,
    retryable: false,
    description: 'The upstream does not know this block; the payment was not settled.',
  },
  upstream_unavailable: {
    status: 503,
    retryable: true,
    description: 'The Bitcoin upstream failed or answered inconsistent data; the payment was not settled.',
  },
  out_of_domain: {
    status: 422,
    retryable: false,
    description:
      'The question is not about Bitcoin fees, the mempool, transactions or blocks; the payment was not settled.',
  },
  no_validated_snapshot: NO_VALIDATED_SNAPSHOT,
} as const satisfies Record<string, ErrorCodeSpec>;
export type AiErrorCode = keyof typeof AI_ERROR_CODES;

/** The AI routes' own rate limit: one counter shared by the five resources. */
export function aiRateLimit(config: ServiceConfig): NamedRateLimit {
  return { name: 'ai', max: config.ai.rateLimitMax, windowMs: config.ai.rateLimitWindowMs };
}

/** Before the challenge: no validated snapshot means no market to compare with (503, nothing to sign). */
export function requireSnapshot(requestId: string, capabilities: CapabilitySet): RouteResult | undefined {
  const read = readSnapshot(capabilities.snapshots!, requestId);
  return 'error' in read ? read.error : undefined;
}

/** The snapshot and its market, or the 503 to answer (a snapshot that expired after the precondition). */
export function readMarket(
  capabilities: CapabilitySet,
  requestId: string,
): { reading: CurrentSnapshot; market: FeeMarket } | { error: RouteResult } {
  const read = readSnapshot(capabilities.snapshots!, requestId);
  if ('error' in read) return read;
  return { reading: read.reading, market: marketFromSnapshot(read.reading.snapshot) };
}

/**
 * The Error for an upstream failure: not found → the resource's 404 code; the upstream down,
 * rate limited or inconsistent → 503. Anything else is a bug and is rethrown (the gate still
 * never settles a throw).
 */
export function upstreamFailure<C extends 'unknown_transaction' | 'unknown_block'>(
  error: unknown,
  notFound: C,
  fail: (code: C | 'upstream_unavailable', message?: string, headers?: Record<string, string>) => RouteResult,
): RouteResult {
  if (error instanceof UpstreamNotFoundError) return fail(notFound);
  if (error instanceof InconsistentUpstreamError) return fail('upstream_unavailable', error.message);
  if (error instanceof FeeServiceError)
    return fail('upstream_unavailable', error.message, { 'retry-after': '10' });
  throw error;
}

/** The 200 answer every AI resource sends: provider, facts and prose, with the snapshot's provenance. */
export function aiAnswer(options: {
  reading: CurrentSnapshot;
  algorithm: string;
  facts: unknown;
  prose: ProseResult;
}): RouteResult {
  const { reading, prose } = options;
  return {
    status: 200,
    headers: { 'cache-control': 'no-store' },
    body: {
      data: { provider: prose.provider, facts: options.facts, prose: prose.prose },
      meta: {
        snapshot_schema: reading.snapshot.snapshot_schema,
        snapshot_digest: reading.snapshot.snapshot_digest,
        source: reading.snapshot.source,
        fetched_at: reading.snapshot.fetched_at,
        age_seconds: reading.age_seconds,
        stale: reading.stale,
        algorithm_version: options.algorithm,
        model: { name: prose.model, used: prose.provider !== 'deterministic', fallback: prose.fallback },
      },
    },
  };
}
