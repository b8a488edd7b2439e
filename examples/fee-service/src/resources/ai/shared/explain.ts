import type { FeeMarket } from '../../../analysis/market';
import type { Capabilities, CapabilitySet } from '../../../capabilities';
import { writeProse } from '../../../capabilities/language-model/prose';
import type { RouteResult } from '../../../http/types';
import { UpstreamNotFoundError } from '../../../upstreams/errors';
import { aiAnswer, readMarket, upstreamFailure } from './answer';
import type { ChainReader } from './chain';

type NotFoundCode = 'unknown_transaction' | 'unknown_block';
type Fail<C extends NotFoundCode> = (
  code: C | 'upstream_unavailable',
  message?: string,
  headers?: Record<string, string>,
) => RouteResult;

/** What the explainers' handler reads of its context (a resource's `ResourceContext`). */
export interface ExplainContext<C extends NotFoundCode> {
  input: { params: Readonly<Record<string, string>> };
  capabilities: Pick<Capabilities, 'snapshots' | 'bitcoin'> & CapabilitySet;
  requestId: string;
  fail: Fail<C>;
}

/** What tells one explainer from the other. */
export interface ExplainerOptions<C extends NotFoundCode, F> {
  /** The path parameter naming the subject (`txid`, `hash_or_height`); read lower-cased. */
  param: string;
  /** What the prose explains, e.g. `this Bitcoin block`. */
  subject: string;
  /** `algorithm_version` of the answer. */
  algorithm: string;
  /** The code of a subject the upstream does not know (404, never settled). */
  notFound: C;
  /** The subject's facts, measured from the upstream against today's fee market. */
  facts(reader: ChainReader, ref: string, market: FeeMarket): Promise<F>;
  /** The prose written from the facts without a model (and the model's fallback). */
  prose(facts: F): string;
  /** A finer answer for a subject the upstream does not know (a replaced transaction), else undefined. */
  whenNotFound?(reader: ChainReader, ref: string, fail: Fail<C>): Promise<RouteResult | undefined>;
}

/**
 * The handler of both explainers (docs/ai-resources.md): the snapshot's market, the subject's facts
 * from the mempool.space-dialect upstream, prose written from them, with the snapshot's provenance.
 * An upstream failure answers the resource's not-found code or 503 (never settled).
 */
export function explainer<C extends NotFoundCode, F>(
  options: ExplainerOptions<C, F>,
): (context: ExplainContext<C>) => Promise<RouteResult> {
  return async ({ input, capabilities, requestId, fail }) => {
    const read = readMarket(capabilities, requestId);
    if ('error' in read) return read.error;
    const reader = capabilities.bitcoin.mempool!;
    const ref = input.params[options.param]!.toLowerCase();
    let facts: F;
    try {
      facts = await options.facts(reader, ref, read.market);
    } catch (error) {
      if (error instanceof UpstreamNotFoundError && options.whenNotFound) {
        const answer = await options.whenNotFound(reader, ref, fail);
        if (answer) return answer;
      }
      return upstreamFailure(error, options.notFound, fail);
    }
    const prose = await writeProse({
      model: capabilities.languageModel,
      subject: options.subject,
      facts,
      deterministic: options.prose(facts),
    });
    return aiAnswer({ reading: read.reading, algorithm: options.algorithm, facts, prose });
  };
}

/** Both explainers need the mempool.space dialect: the reason they are paused without it. */
export function needsMempoolDialect(what: string) {
  return (capabilities: CapabilitySet): string | undefined =>
    capabilities.bitcoin?.mempool
      ? undefined
      : `needs a mempool.space-dialect upstream (MEMPOOL_URL) for ${what}`;
}
