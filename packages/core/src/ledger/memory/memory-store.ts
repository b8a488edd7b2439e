import { TollboothError } from '../../errors/index';
import type { PaymentIdentity } from '../../scheme';
import type { AccessStore } from '../access-types';
import { assertLedgerInvariant, settlesWithStoredResponse } from '../invariant';
import type { ReservationStore } from '../reservation-types';
import {
  type BindResult,
  type ClaimResult,
  type IdentifierBinding,
  LEDGER_ERROR_STATUS,
  type LedgerEntry,
  type LedgerExpectation,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerState,
  type LedgerStore,
  type NewIdentifierBinding,
  type ReplacedBinding,
} from '../types';
import { copy, ingest, put, SEALED_FIELDS, seal } from './copy';
import { createMemoryAccessBook } from './memory-access';
import { createMemoryReservationBook } from './memory-reservations';

/** Options of {@link createMemoryLedgerStore}. Every field is optional; see {@link MEMORY_LEDGER_STORE_DEFAULTS}. */
export interface MemoryLedgerStoreOptions {
  /**
   * How often expired entries are purged automatically, in ms. `0` turns the automatic purge off
   * (call `purgeExpired` yourself). The timer is unref'd: it never keeps the process alive.
   */
  purgeIntervalMs?: number;
  /** Clock used for `updatedAt` and the automatic purge (epoch ms). */
  now?: () => number;
}

/** Defaults of {@link MemoryLedgerStoreOptions}. */
export const MEMORY_LEDGER_STORE_DEFAULTS: Readonly<Required<MemoryLedgerStoreOptions>> = Object.freeze({
  purgeIntervalMs: 60_000,
  now: () => Date.now(),
});

/** Default of `LedgerQuery.limit`, shared by every store. */
export const LEDGER_QUERY_DEFAULT_LIMIT = 100;

const LEDGER_STATES: readonly LedgerState[] = [
  'claimed',
  'verified',
  'settling',
  'settled',
  'rejected',
  'uncertain',
];

function resolveOptions(options: MemoryLedgerStoreOptions): Required<MemoryLedgerStoreOptions> {
  const given = Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as MemoryLedgerStoreOptions;
  const resolved = { ...MEMORY_LEDGER_STORE_DEFAULTS, ...given };
  const problems: string[] = [];
  if (!Number.isSafeInteger(resolved.purgeIntervalMs) || resolved.purgeIntervalMs < 0) {
    problems.push(`purgeIntervalMs must be a non-negative integer (got ${String(resolved.purgeIntervalMs)})`);
  }
  if (typeof resolved.now !== 'function') problems.push('now must be a function returning epoch ms');
  if (problems.length > 0) {
    throw new TollboothError('invalid_config', `Invalid memory ledger store options: ${problems.join('; ')}`);
  }
  return resolved;
}

/**
 * Entries no store purges, whatever their `expiresAt` (docs/ledger.md#purging): a payment settled
 * before its handler ran whose answer was never produced (its payer is served whenever it
 * retries), and a `settling` or `uncertain` one (a charge may have happened; the reconciler
 * resolves it).
 */
function keptPastExpiry(entry: LedgerEntry): boolean {
  if (entry.state === 'settling' || entry.state === 'uncertain') return true;
  return entry.state === 'settled' && entry.response === undefined;
}

/** Newest first: `createdAt` descending, then `id` descending (the order every store uses). */
function newerFirst(a: LedgerEntry, b: LedgerEntry): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function resolveLimit(limit: number | undefined): number {
  const value = limit ?? LEDGER_QUERY_DEFAULT_LIMIT;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TollboothError('invalid_config', `limit must be a non-negative integer (got ${value})`);
  }
  return value;
}

function holds(entry: LedgerEntry, expect: LedgerExpectation): boolean {
  return expect.state.includes(entry.state) && (expect.owner === undefined || entry.owner === expect.owner);
}

/**
 * Creates an in-process {@link LedgerStore}: the default store of the middleware, for a single
 * instance. Entries live in a `Map`, so claim, get, update and remove are O(1) however many
 * entries there are; a second index maps transaction hashes to entries. Every method returns
 * copies: mutating a returned entry never changes the store. The `payload` and `requirements` of
 * returned entries are deeply frozen and shared between copies (they are written once and only
 * read, and copying them was most of the store's cost on the paid path); every other part is a
 * fresh copy. Nothing survives a restart — use the SQLite, Redis or Postgres store for that.
 *
 * Patch semantics (shared by every store): a property whose value is `undefined` leaves the
 * stored field unchanged; `updatedAt` is set by the store.
 *
 * @param options - `purgeIntervalMs` (default 60 000; 0 = off), `now` (default `Date.now`).
 * @throws {TollboothError} `invalid_config`, listing every invalid option.
 * @example
 * ```ts
 * import { createMemoryLedgerStore } from '@tollbooth/core';
 *
 * const store = createMemoryLedgerStore();
 * const { acquired } = await store.claim(entry);
 * await store.close();
 * ```
 */
export function createMemoryLedgerStore(
  options: MemoryLedgerStoreOptions = {},
): LedgerStore & AccessStore & ReservationStore {
  const { purgeIntervalMs, now } = resolveOptions(options);
  const entries = new Map<PaymentIdentity, LedgerEntry>();
  const byTransaction = new Map<string, Set<PaymentIdentity>>();
  const byState = new Map<LedgerState, Set<PaymentIdentity>>(LEDGER_STATES.map((s) => [s, new Set()]));
  const identifiers = new Map<string, IdentifierBinding>();
  let closed = false;

  const index = (entry: LedgerEntry): void => {
    let states = byState.get(entry.state);
    if (!states) {
      states = new Set();
      byState.set(entry.state, states);
    }
    states.add(entry.id);
    if (entry.transaction !== undefined) {
      let ids = byTransaction.get(entry.transaction);
      if (!ids) {
        ids = new Set();
        byTransaction.set(entry.transaction, ids);
      }
      ids.add(entry.id);
    }
  };
  const unindex = (entry: LedgerEntry): void => {
    byState.get(entry.state)?.delete(entry.id);
    if (entry.transaction !== undefined) {
      const ids = byTransaction.get(entry.transaction);
      ids?.delete(entry.id);
      if (ids?.size === 0) byTransaction.delete(entry.transaction);
    }
  };
  const assertOpen = (): void => {
    if (closed) throw new TollboothError('ledger_unavailable', 'The memory ledger store is closed');
  };
  const access = createMemoryAccessBook(assertOpen, now);
  const reservations = createMemoryReservationBook(assertOpen);

  /**
   * Whether a binding may be replaced: it is still the one the caller read, and the payment it
   * names charged nothing (absent or rejected) or is the one the caller binds again.
   */
  const replaceable = (
    existing: IdentifierBinding,
    binding: NewIdentifierBinding,
    replaces: ReplacedBinding | undefined,
  ): boolean => {
    if (!replaces || existing.entry !== replaces.entry || existing.version !== replaces.version) return false;
    if (replaces.entry === binding.entry) return true;
    const entry = entries.get(replaces.entry);
    return entry === undefined || entry.state === 'rejected';
  };

  const purge = (at: number): number => {
    let purged = 0;
    for (const entry of entries.values()) {
      if (entry.expiresAt < at && !keptPastExpiry(entry)) {
        entries.delete(entry.id);
        unindex(entry);
        purged += 1;
      }
    }
    // A binding lives as long as the entry it names is kept: a retry under the same identifier
    // must find the payment it already made (docs/ledger.md#purging).
    for (const binding of identifiers.values()) {
      const entry = entries.get(binding.entry);
      if (binding.expiresAt < at && !(entry && keptPastExpiry(entry))) {
        identifiers.delete(binding.key);
        purged += 1;
      }
    }
    return purged + access.purge(at) + reservations.purge(at);
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  if (purgeIntervalMs > 0) {
    timer = setInterval(() => purge(now()), purgeIntervalMs);
    timer.unref();
  }

  return {
    async claim(entry: LedgerEntry): Promise<ClaimResult> {
      assertOpen();
      assertLedgerInvariant(entry);
      const existing = entries.get(entry.id);
      if (existing) return { acquired: false, entry: copy(existing) };
      const stored = ingest(entry);
      entries.set(stored.id, stored);
      index(stored);
      return { acquired: true, entry: copy(stored) };
    },

    async get(id: PaymentIdentity): Promise<LedgerEntry | undefined> {
      assertOpen();
      const entry = entries.get(id);
      return entry ? copy(entry) : undefined;
    },

    async update(
      id: PaymentIdentity,
      expect: LedgerExpectation,
      patch: LedgerPatch,
    ): Promise<LedgerEntry | undefined> {
      assertOpen();
      assertLedgerInvariant(patch);
      const current = entries.get(id);
      if (!current || !holds(current, expect)) return undefined;
      if (settlesWithStoredResponse(patch) && (current.response?.status ?? 0) >= LEDGER_ERROR_STATUS)
        return undefined;
      const next: LedgerEntry = { ...current };
      const writable = next as unknown as Record<string, unknown>;
      for (const [key, value] of Object.entries(patch)) {
        if (value === undefined || key === 'id' || key === 'createdAt' || key === 'updatedAt') continue;
        put(writable, key, SEALED_FIELDS.has(key) ? seal(value) : copy(value));
      }
      next.updatedAt = now();
      unindex(current);
      entries.set(id, next);
      index(next);
      return copy(next);
    },

    async remove(id: PaymentIdentity, expect: LedgerExpectation): Promise<boolean> {
      assertOpen();
      const current = entries.get(id);
      if (!current || !holds(current, expect)) return false;
      entries.delete(id);
      unindex(current);
      return true;
    },

    async query(query: LedgerQuery): Promise<LedgerEntry[]> {
      assertOpen();
      const limit = resolveLimit(query.limit);
      const states =
        query.state === undefined ? undefined : typeof query.state === 'string' ? [query.state] : query.state;
      let candidates: Iterable<LedgerEntry>;
      if (query.id !== undefined) {
        const entry = entries.get(query.id);
        candidates = entry ? [entry] : [];
      } else if (query.transaction !== undefined) {
        candidates = idsToEntries(byTransaction.get(query.transaction) ?? []);
      } else if (states !== undefined) {
        candidates = (function* () {
          for (const state of new Set(states)) yield* idsToEntries(byState.get(state) ?? []);
        })();
      } else {
        candidates = entries.values();
      }
      // Keep only the `limit` newest matches (sorted insertion): O(n log limit), never a full sort.
      const top: LedgerEntry[] = [];
      if (limit === 0) return top;
      for (const entry of candidates) {
        if (query.id !== undefined && entry.id !== query.id) continue;
        if (states !== undefined && !states.includes(entry.state)) continue;
        if (query.transaction !== undefined && entry.transaction !== query.transaction) continue;
        if (query.payer !== undefined && entry.payer !== query.payer) continue;
        if (query.leaseUntilBefore !== undefined && !(entry.leaseUntil < query.leaseUntilBefore)) continue;
        const last = top[top.length - 1];
        if (top.length === limit && last && newerFirst(entry, last) >= 0) continue;
        let lo = 0;
        let hi = top.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (newerFirst(top[mid]!, entry) <= 0) lo = mid + 1;
          else hi = mid;
        }
        top.splice(lo, 0, entry);
        if (top.length > limit) top.pop();
      }
      return top.map((entry) => copy(entry));

      function* idsToEntries(ids: Iterable<PaymentIdentity>): Generator<LedgerEntry> {
        for (const id of ids) {
          const entry = entries.get(id);
          if (entry) yield entry;
        }
      }
    },

    async bindIdentifier(binding: NewIdentifierBinding, replaces?: ReplacedBinding): Promise<BindResult> {
      assertOpen();
      const existing = identifiers.get(binding.key);
      if (existing && !replaceable(existing, binding, replaces))
        return { bound: false, binding: { ...existing } };
      const stored: IdentifierBinding = { ...binding, version: existing ? existing.version + 1 : 1 };
      identifiers.set(binding.key, stored);
      return { bound: true, binding: { ...stored } };
    },

    async getIdentifier(key: string): Promise<IdentifierBinding | undefined> {
      assertOpen();
      const binding = identifiers.get(key);
      return binding ? { ...binding } : undefined;
    },

    grantAccess: access.grantAccess,
    useAccess: access.useAccess,
    returnAccess: access.returnAccess,
    claimNonce: access.claimNonce,
    queryAccess: access.queryAccess,
    reserveBalance: reservations.reserveBalance,
    releaseReservation: reservations.releaseReservation,

    async purgeExpired(at: number): Promise<number> {
      assertOpen();
      return purge(at);
    },

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      closed = true;
      entries.clear();
      identifiers.clear();
      access.clear();
      reservations.clear();
      byTransaction.clear();
      for (const ids of byState.values()) ids.clear();
    },
  };
}
