import { createHash } from 'node:crypto';
import { canonicalJson } from '../../snapshot/digest';

/** What an upstream answered, kept with when and a digest of its content. */
export interface Reading<T> {
  value: T;
  /** When the upstream answered, epoch ms. */
  fetchedAtMs: number;
  /** `sha256:` + hex SHA-256 of the canonical JSON of `value`. */
  digest: string;
}

export interface CachedReadingOptions<T> {
  /** Fetches and validates a value (throws when the upstream fails or answers nonsense). */
  fetch(): Promise<T>;
  now?: () => number;
  /** A reading younger than this is served without asking the upstream. Default 10,000 ms. */
  refreshMs?: number;
  /** When a refresh fails, a reading up to this old is still served (stale). Default 120,000 ms. */
  fallbackMs?: number;
}

export const CACHED_READING_DEFAULTS = { refreshMs: 10_000, fallbackMs: 120_000 } as const;

/** The last reading is too old and the upstream failed: the resource answers 503 (never charged). */
export class NoReadingError extends Error {
  constructor(override readonly cause: unknown) {
    super('no upstream reading recent enough to serve', { cause });
    this.name = 'NoReadingError';
  }
}

/**
 * Upstream data fetched on demand and kept for `refreshMs`: concurrent requests share one fetch,
 * a failed refresh falls back to the last reading up to `fallbackMs` old (the freshness rules of
 * docs/fee-service-contract.md#limits), and nothing is polled while nobody asks.
 */
export function createCachedReading<T>(options: CachedReadingOptions<T>) {
  const now = options.now ?? Date.now;
  const refreshMs = options.refreshMs ?? CACHED_READING_DEFAULTS.refreshMs;
  const fallbackMs = options.fallbackMs ?? CACHED_READING_DEFAULTS.fallbackMs;
  let last: Reading<T> | undefined;
  let inFlight: Promise<Reading<T>> | undefined;

  const refresh = () => {
    inFlight ??= options
      .fetch()
      .then((value) => {
        const digest = `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
        last = { value, fetchedAtMs: now(), digest };
        return last;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  return {
    /** The current reading, fetched when older than `refreshMs`. @throws NoReadingError */
    async read(): Promise<Reading<T>> {
      if (last && now() - last.fetchedAtMs < refreshMs) return last;
      try {
        return await refresh();
      } catch (error) {
        if (last && now() - last.fetchedAtMs <= fallbackMs) return last;
        throw new NoReadingError(error);
      }
    },
    /** The last reading, whatever its age. */
    peek: (): Reading<T> | undefined => last,
  };
}
export type CachedReading<T> = ReturnType<typeof createCachedReading<T>>;

/**
 * One cached reading per owner (a service's upstreams), made on first use and kept with it: a
 * paid route and the analyst's step that both read it share one upstream fetch and one digest.
 *
 * @example
 * export const nextBlockReading = sharedReadings(fetchNextBlockData);
 * const current = await nextBlockReading(capabilities.bitcoin).read();
 */
export function sharedReadings<K extends object, T>(fetch: (owner: K) => Promise<T>) {
  const readings = new WeakMap<K, CachedReading<T>>();
  return (owner: K): CachedReading<T> => {
    let reading = readings.get(owner);
    if (!reading) {
      reading = createCachedReading({ fetch: () => fetch(owner) });
      readings.set(owner, reading);
    }
    return reading;
  };
}

/** Whole seconds since a reading, and whether it is stale (older than 30 s, or a newer block seen). */
export function freshnessOf(
  reading: Reading<unknown>,
  nowMs: number,
  options: { tipHeight: number; newestTip?: number | undefined },
): { age_seconds: number; stale: boolean } {
  const ageMs = Math.max(0, nowMs - reading.fetchedAtMs);
  const newerBlock = options.newestTip !== undefined && options.newestTip > options.tipHeight;
  return { age_seconds: Math.floor(ageMs / 1000), stale: ageMs > 30_000 || newerBlock };
}
