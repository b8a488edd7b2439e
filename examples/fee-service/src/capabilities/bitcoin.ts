import type { ServiceConfig, UpstreamKind } from '../config';
import type { MempoolSimulator } from '../simulator/server';
import type { FeeSnapshotSource } from '../snapshot/types';
import { type BitcoinCoreClient, createBitcoinCoreClient } from '../upstreams/bitcoin-core';
import { createEsploraClient, type EsploraClient } from '../upstreams/esplora';
import { createMempoolSpaceClient, type MempoolSpaceClient } from '../upstreams/mempool-space';

/**
 * Every Bitcoin upstream this deployment is configured with. The fee snapshots come from
 * `primary`; resources that compare sources (the landscape) or need a dialect's own calls
 * (`getblocktemplate`, `testmempoolaccept`) use the others where present.
 */
export interface BitcoinUpstreams {
  /** The dialect of the fee snapshots (`UPSTREAM`). */
  primary: UpstreamKind;
  /** mempool.space REST (a self-hosted mempool instance too). */
  mempool?: MempoolSpaceClient;
  /** Esplora HTTP API. */
  esplora?: EsploraClient;
  /** Bitcoin Core JSON-RPC. */
  core?: BitcoinCoreClient;
}

/** The configured upstreams, in the order sources are listed: mempool.space, Esplora, Core. */
export function configuredKinds(upstreams: BitcoinUpstreams): UpstreamKind[] {
  return (['mempool', 'esplora', 'core'] as const).filter((kind) => upstreams[kind] !== undefined);
}

/** The snapshot source of the primary dialect. */
export function primarySource(upstreams: BitcoinUpstreams): FeeSnapshotSource {
  const source = upstreams[upstreams.primary];
  if (!source) throw new TypeError(`the primary upstream ${upstreams.primary} is not configured`);
  return source;
}

/**
 * Builds the clients of every configured upstream URL, or of all three dialects of the embedded
 * simulator when no URL is configured.
 */
export function createBitcoinUpstreams(
  config: Pick<ServiceConfig, 'upstream' | 'sources'>,
  simulator: MempoolSimulator | undefined,
): BitcoinUpstreams {
  const { sources, upstream } = config;
  const embedded = !sources.mempool && !sources.esplora && !sources.core;
  if (embedded && !simulator) throw new TypeError('no upstream URL is configured and no simulator runs');
  const mempoolUrl = embedded ? simulator!.url : sources.mempool;
  const esploraUrl = embedded ? simulator!.esploraUrl : sources.esplora;
  const out: BitcoinUpstreams = { primary: upstream.kind };
  if (mempoolUrl) out.mempool = createMempoolSpaceClient({ baseUrl: mempoolUrl });
  if (esploraUrl) out.esplora = createEsploraClient({ baseUrl: esploraUrl });
  if (embedded) {
    out.core = createBitcoinCoreClient({
      url: simulator!.coreRpcUrl,
      username: simulator!.rpcUser,
      password: simulator!.rpcPassword,
    });
  } else if (sources.core) {
    out.core = createBitcoinCoreClient({
      url: sources.core,
      ...(upstream.coreUser ? { username: upstream.coreUser } : {}),
      ...(upstream.corePassword ? { password: upstream.corePassword } : {}),
    });
  }
  return out;
}
