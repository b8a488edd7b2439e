import { fromAtomicAmount } from '@tollbooth/core';
import type { Capabilities, CapabilitySet } from '../capabilities';
import { ALGORITHM_VERSION, ILLUSTRATION_VBYTES } from '../domain/constants';
import { deriveFeeFigures } from '../domain/derived';
import { feeForVsize } from '../domain/fee-math';
import { type FeeTiers, TIER_NAMES } from '../domain/types';
import { histogramBands, projectedBlockFigures } from '../resources/fees/landscape/build';
import { FEE_DECISION_OFFER } from '../resources/fees/now/offer';
import type { Publication } from '../resources/publish';
import { SNAPSHOT_SERVICE_DEFAULTS } from '../snapshot/service';

/**
 * What the dashboard shows, as one JSON document (`GET /dashboard/data`): built from the service's
 * own free sources — the current validated snapshot, the observatory's history and the registry's
 * publications — never by calling a paid route. It shows what the free preview shows (the tiers,
 * the mempool, the potential savings) and offers the paid decision (its price, a link to pay)
 * without its content: no send-or-wait answer and no reason codes, which are what
 * `GET /api/v1/fees/now` sells.
 */
export interface DashboardData {
  /** Server time the document was built (ISO). */
  generated_at: string;
  freshness: { fresh_seconds: number; fallback_seconds: number };
  snapshot: DashboardSnapshot | null;
  /** Why there is no snapshot to show. */
  snapshot_error?: string;
  /** The mempool's unconfirmed virtual size by fee-rate band, from the upstream's fee histogram. */
  fee_bands: { bands: DashboardBand[] } | null;
  /** Why there are no fee bands (the upstream gives no histogram, or it failed). */
  fee_bands_error?: string;
  /** The last blocks' fee-rate percentiles (sat/vB), oldest first. */
  blocks: DashboardBlock[] | null;
  scoreboard: DashboardScoreboard | null;
  /** Why the observatory's parts are missing (off, or its history unreadable). */
  observatory_error?: string;
  /** The paid send-or-wait decision on offer: what it costs and where to pay, never its answer. */
  decision_offer: DashboardDecisionOffer | null;
  resources: DashboardResource[];
  discovery: { well_known: string; catalog: string; openapi: string };
}

/** The decision as the dashboard sells it (`GET /api/v1/fees/now`). */
export interface DashboardDecisionOffer {
  method: string;
  path: string;
  /** `0.001 USDC`. */
  price: string;
  algorithm_version: string;
  availability: string;
  /** Why it cannot be bought here, when it is not active. */
  reason?: string;
  /** Where a browser pays for it (the paywall page), when it is active. */
  href?: string;
}

export interface DashboardSnapshot {
  fetched_at: string;
  /** Whole seconds old when the document was built (the page counts on from `fetched_at`). */
  age_seconds: number;
  stale: boolean;
  source: string;
  tip_height: number | null;
  digest: string;
  tiers: Array<{ tier: string; rate_sat_vb: number; fee_sat: number }>;
  illustration_vbytes: number;
  /** The free preview's savings: the economy tier against the fastest one. */
  potential_savings: { sat_vb: number; percent: number; at_140_vbytes_sat: number };
  mempool: { count: number; vsize: number; total_fee: number | null; projected_block_count: number };
  /** As the fee landscape publishes them (`index` 0 is the next block). */
  projected_blocks: Array<ReturnType<typeof projectedBlockFigures>>;
}

/** A fee band of the mempool (`histogramBands` of the fee landscape). */
export interface DashboardBand {
  min_sat_vb: number;
  /** null for the top band. */
  max_sat_vb: number | null;
  vsize: number;
  /** Estimated from the band's virtual size at the mempool's mean transaction size. */
  transaction_count: number;
}

export interface DashboardBlock {
  height: number;
  /** Unix seconds. */
  time: number;
  p10: number;
  p25: number;
  p50: number;
  p75: number;
  p90: number;
}

export interface DashboardScoreboard {
  hours: number;
  window: { from: string; to: string };
  horizons: number[];
  rows: Array<{
    target: number;
    rank: number | null;
    source: string;
    n: number;
    hit_rate: number | null;
    median_overpayment_sats_140: number | null;
    availability: number | null;
    cost: number | null;
  }>;
  empty_reason?: string;
  /** Hit rate per hour and source, per horizon (for the charts): x in Unix seconds. */
  timeline: {
    x: number[];
    series: Array<{ target: number; source: string; hit_rate: Array<number | null> }>;
  };
}

export interface DashboardResource {
  method: string;
  path: string;
  description: string;
  /** `0.001 USDC`, or null for a free resource. */
  price: string | null;
  availability: string;
  reason?: string;
  /** A link a browser can follow (an active GET needing no parameter): a paid one opens its paywall. */
  href?: string;
}

/** Scoreboard window and chart step of the dashboard. */
export const DASHBOARD_SCORE_HOURS = 24;
/** Blocks in the percentile chart. */
export const DASHBOARD_BLOCKS = 144;

/** The fee bands of the primary upstream's mempool (mempool.space's `/api/mempool` histogram). */
async function bandsPart(
  bitcoin: Capabilities['bitcoin'] | undefined,
  highestRate: number | undefined,
): Promise<{ bands: DashboardBand[] | null; error?: string }> {
  const mempool = bitcoin?.mempool;
  if (!mempool) return { bands: null, error: 'the configured upstream gives no fee histogram' };
  try {
    const info = await mempool.fetchMempool();
    if (!info.fee_histogram) return { bands: null, error: 'the upstream gave no fee histogram' };
    // The fee landscape's bands (grouped at mempool.space's fee levels, labelled by their buckets' real bounds), lowest first.
    const { bands } = histogramBands(
      {
        count: info.count,
        vsize: info.vsize,
        total_fee: Math.round(info.total_fee ?? 0),
        histogram: info.fee_histogram.map(([rate, vsize]) => [rate, vsize] as [number, number]),
      },
      highestRate,
    );
    return { bands: bands.reverse() };
  } catch (error) {
    return {
      bands: null,
      error: `the fee histogram could not be read (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

function snapshotPart(capabilities: Pick<Capabilities, 'snapshots'>): {
  snapshot: DashboardSnapshot | null;
  error?: string;
} {
  let current: ReturnType<Capabilities['snapshots']['current']>;
  try {
    current = capabilities.snapshots.current();
  } catch (error) {
    return { snapshot: null, error: error instanceof Error ? error.message : String(error) };
  }
  const { snapshot } = current;
  const tiers: FeeTiers = snapshot.tiers;
  // The preview's own figures (the same function builds it): the decision is not computed here.
  const figures = deriveFeeFigures(snapshot);
  return {
    snapshot: {
      fetched_at: snapshot.fetched_at,
      age_seconds: current.age_seconds,
      stale: current.stale,
      source: snapshot.source,
      tip_height: snapshot.tip_height,
      digest: snapshot.snapshot_digest,
      tiers: TIER_NAMES.map((tier) => ({
        tier,
        rate_sat_vb: tiers[tier],
        fee_sat: feeForVsize(tiers[tier], ILLUSTRATION_VBYTES),
      })),
      illustration_vbytes: ILLUSTRATION_VBYTES,
      potential_savings: figures.potential_savings,
      mempool: {
        count: snapshot.mempool.count,
        vsize: snapshot.mempool.vsize,
        total_fee: snapshot.mempool.total_fee ?? null,
        projected_block_count: figures.mempool.projected_block_count,
      },
      projected_blocks: snapshot.projected_blocks.map((block, i) =>
        projectedBlockFigures(block, i, snapshot.tiers.minimum),
      ),
    },
  };
}

async function observatoryPart(history: Capabilities['history']): Promise<{
  blocks: DashboardBlock[];
  scoreboard: DashboardScoreboard;
}> {
  const [rows, board, timeline] = await Promise.all([
    history.blockStats({ limit: DASHBOARD_BLOCKS }),
    history.scoreboard({ hours: DASHBOARD_SCORE_HOURS }),
    history.timeline({ hours: DASHBOARD_SCORE_HOURS, stepHours: 1 }),
  ]);
  return {
    blocks: rows
      .map((row) => ({
        height: row.height,
        time: Math.floor(Date.parse(row.time) / 1000),
        p10: row.p10,
        p25: row.p25,
        p50: row.p50,
        p75: row.p75,
        p90: row.p90,
      }))
      .sort((a, b) => a.height - b.height),
    scoreboard: {
      hours: DASHBOARD_SCORE_HOURS,
      window: board.window,
      horizons: [...board.horizons],
      rows: board.rows.map((row) => ({
        target: row.target,
        rank: row.rank ?? null,
        source: row.source,
        n: row.n,
        hit_rate: row.hit_rate ?? null,
        median_overpayment_sats_140: row.median_overpayment_sats_140 ?? null,
        availability: row.availability ?? null,
        cost: row.cost ?? null,
      })),
      ...(board.empty_reason ? { empty_reason: board.empty_reason } : {}),
      timeline: {
        x: [...timeline.x],
        series: timeline.rows.map((row) => ({
          target: row.target,
          source: row.source,
          hit_rate: [...row.hit_rate],
        })),
      },
    },
  };
}

/** Whether a browser can open the resource by its path alone: a GET with no path parameter and no required query. */
function opensByPath(resource: Publication['resource']): boolean {
  if (resource.method !== 'GET' || resource.path.includes(':')) return false;
  const input = resource.input as
    | { queryParams?: { safeParse(value: unknown): { success: boolean } } }
    | undefined;
  return input?.queryParams === undefined || input.queryParams.safeParse({}).success;
}

/** Every published resource with its price from the registry, and a link where a browser can follow one. */
export function dashboardResources(
  publications: readonly Publication[],
  baseUrl: string,
): DashboardResource[] {
  const base = baseUrl.replace(/\/+$/, '');
  return publications.map(({ resource, availability, reason }) => ({
    method: resource.method,
    path: resource.path,
    description: resource.description,
    price: resource.price ? `${fromAtomicAmount(resource.price.amount, 6)} USDC` : null,
    availability,
    ...(reason ? { reason } : {}),
    ...(availability === 'active' && opensByPath(resource) ? { href: `${base}${resource.path}` } : {}),
  }));
}

/** The decision on offer, from its publication: price and paywall link, or why it is not sold here. */
export function decisionOffer(resources: readonly DashboardResource[]): DashboardDecisionOffer | null {
  const decision = resources.find(
    (r) => r.method === FEE_DECISION_OFFER.method && r.path === FEE_DECISION_OFFER.path,
  );
  if (!decision?.price) return null;
  return {
    method: decision.method,
    path: decision.path,
    price: decision.price,
    algorithm_version: ALGORITHM_VERSION,
    availability: decision.availability,
    ...(decision.reason ? { reason: decision.reason } : {}),
    ...(decision.href ? { href: decision.href } : {}),
  };
}

export interface DashboardSourceOptions {
  capabilities: CapabilitySet & Pick<Capabilities, 'snapshots'>;
  publications: readonly Publication[];
  baseUrl: string;
  discovery: DashboardData['discovery'];
  now?: () => number;
}

/** The dashboard's document, rebuilt only when what it shows changed, with a validator for `ETag`. */
export interface DashboardSource {
  read(): Promise<{ data: DashboardData; text: string; etag: string }>;
}

/**
 * Builds the dashboard document on demand. It is rebuilt when the snapshot (its digest or
 * staleness) or the observatory's tip changes, and at most once at a time: every polling page
 * shares one build, and a page whose copy is current gets `304`.
 */
export function createDashboardSource(options: DashboardSourceOptions): DashboardSource {
  const { capabilities } = options;
  const now = options.now ?? Date.now;
  const resources = dashboardResources(options.publications, options.baseUrl);
  const offer = decisionOffer(resources);
  const freshness = {
    fresh_seconds: SNAPSHOT_SERVICE_DEFAULTS.freshMs / 1000,
    fallback_seconds: SNAPSHOT_SERVICE_DEFAULTS.fallbackMs / 1000,
  };
  let last: { key: string; value: { data: DashboardData; text: string; etag: string } } | undefined;
  let building: Promise<{ data: DashboardData; text: string; etag: string }> | undefined;

  async function build(): Promise<{ data: DashboardData; text: string; etag: string }> {
    const snapshot = snapshotPart(capabilities);
    const history = capabilities.history;
    let tip: number | undefined;
    let observatoryError: string | undefined = history
      ? undefined
      : 'the observatory is off in this deployment';
    if (history) {
      try {
        tip = (await history.status()).tip_height;
      } catch (error) {
        observatoryError = `the observatory history could not be read (${error instanceof Error ? error.message : String(error)})`;
      }
    }
    const key = [
      snapshot.snapshot?.digest,
      snapshot.snapshot?.stale,
      snapshot.error,
      tip,
      observatoryError,
    ].join('|');
    if (last?.key === key) return last.value;
    // Read once per snapshot (the key): the histogram moves with the mempool the snapshot shows.
    const projected = snapshot.snapshot?.projected_blocks ?? [];
    const bands = await bandsPart(
      capabilities.bitcoin,
      projected.length === 0 ? undefined : Math.max(...projected.map((b) => b.max_fee_rate_sat_vb)),
    );
    let observatory: Awaited<ReturnType<typeof observatoryPart>> | undefined;
    if (history && !observatoryError) {
      try {
        observatory = await observatoryPart(history);
      } catch (error) {
        observatoryError = `the observatory history could not be read (${error instanceof Error ? error.message : String(error)})`;
      }
    }
    const data: DashboardData = {
      generated_at: new Date(now()).toISOString(),
      freshness,
      snapshot: snapshot.snapshot,
      ...(snapshot.error ? { snapshot_error: snapshot.error } : {}),
      fee_bands: bands.bands ? { bands: bands.bands } : null,
      ...(bands.error ? { fee_bands_error: bands.error } : {}),
      blocks: observatory?.blocks ?? null,
      scoreboard: observatory?.scoreboard ?? null,
      ...(observatoryError ? { observatory_error: observatoryError } : {}),
      decision_offer: offer,
      resources,
      discovery: options.discovery,
    };
    const text = JSON.stringify(data);
    const value = { data, text, etag: `"${fnv1a(key)}-${text.length.toString(36)}"` };
    last = { key, value };
    return value;
  }

  return {
    read() {
      building ??= build().finally(() => {
        building = undefined;
      });
      return building;
    },
  };
}

/** FNV-1a of a string: a cheap validator for `ETag`, not a security hash. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
