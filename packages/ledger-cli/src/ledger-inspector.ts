import {
  type LedgerEntry,
  type LedgerQuery,
  type LedgerState,
  type LedgerStore,
  TollboothError,
} from '@tollbooth/core';

/** Every ledger state, in lifecycle order. */
export const LEDGER_STATES: readonly LedgerState[] = [
  'claimed',
  'verified',
  'settling',
  'settled',
  'rejected',
  'uncertain',
];

/** Counts of entries by state (every state present, zero when none). */
export type LedgerStats = Record<LedgerState, number> & { total: number };

/** Filters of {@link LedgerInspector.list}. */
export interface LedgerListFilter {
  state?: LedgerState | readonly LedgerState[];
  payer?: string;
  transaction?: string;
  /** Newest first; default 100. */
  limit?: number;
}

/** A read-only view of a settlement ledger for operators. It never changes an entry. */
export interface LedgerInspector {
  /** The entry of one payment identity, or `undefined`. */
  byId(id: string): Promise<LedgerEntry | undefined>;
  /** Entries whose settlement transaction is `hash` (normally one). */
  byTransaction(hash: string, limit?: number): Promise<LedgerEntry[]>;
  /** Entries of a payer, newest first. */
  byPayer(payer: string, limit?: number): Promise<LedgerEntry[]>;
  /** Entries in a state (or any of several), newest first. */
  byState(state: LedgerState | readonly LedgerState[], limit?: number): Promise<LedgerEntry[]>;
  /**
   * Entries whose settlement outcome is unknown (facilitator timeout, 5xx, `settlement_pending`):
   * the ones an operator may have to look at. A retry of the same payload reconciles them.
   */
  uncertain(limit?: number): Promise<LedgerEntry[]>;
  /** Entries matching every given filter, newest first. */
  list(filter?: LedgerListFilter): Promise<LedgerEntry[]>;
  /** How many entries are in each state (up to `limitPerState` counted per state). */
  stats(limitPerState?: number): Promise<LedgerStats>;
}

/** Defaults of {@link createLedgerInspector}. */
export const LEDGER_INSPECTOR_DEFAULTS = {
  /** Default `limit` of listings. */
  limit: 100,
  /** Most entries `stats` counts per state. */
  statsLimitPerState: 1_000_000,
} as const;

function checkState(state: string): asserts state is LedgerState {
  if (!LEDGER_STATES.includes(state as LedgerState)) {
    throw new TollboothError(
      'invalid_config',
      `unknown ledger state "${state}" (one of ${LEDGER_STATES.join(', ')})`,
    );
  }
}

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new TollboothError('invalid_config', `limit must be a non-negative integer (got ${limit})`);
  }
  return limit;
}

/**
 * Wraps a `LedgerStore` in a read-only facade for operators: look an entry up by payment
 * identity, transaction or payer, list entries by state, list the uncertain ones and count
 * entries by state. Only `get` and `query` of the store are called.
 *
 * @throws TollboothError `invalid_config` (from the methods) for an unknown state or a bad limit.
 * @example
 * const inspector = createLedgerInspector(createSqliteLedgerStore({ filename: 'ledger.db' }));
 * for (const entry of await inspector.uncertain()) console.log(entry.id, entry.transaction);
 */
export function createLedgerInspector(store: LedgerStore): LedgerInspector {
  const list = async (filter: LedgerListFilter = {}): Promise<LedgerEntry[]> => {
    const query: LedgerQuery = { limit: checkLimit(filter.limit ?? LEDGER_INSPECTOR_DEFAULTS.limit) };
    if (filter.state !== undefined) {
      const states = typeof filter.state === 'string' ? [filter.state] : [...filter.state];
      for (const state of states) checkState(state);
      query.state = states.length === 1 ? states[0]! : states;
    }
    if (filter.payer !== undefined) query.payer = filter.payer;
    if (filter.transaction !== undefined) query.transaction = filter.transaction;
    return store.query(query);
  };
  return {
    byId: (id) => store.get(id),
    byTransaction: (hash, limit) => list({ transaction: hash, ...(limit === undefined ? {} : { limit }) }),
    byPayer: (payer, limit) => list({ payer, ...(limit === undefined ? {} : { limit }) }),
    byState: (state, limit) => list({ state, ...(limit === undefined ? {} : { limit }) }),
    uncertain: (limit) => list({ state: 'uncertain', ...(limit === undefined ? {} : { limit }) }),
    list,
    async stats(limitPerState = LEDGER_INSPECTOR_DEFAULTS.statsLimitPerState) {
      checkLimit(limitPerState);
      const counts = await Promise.all(
        LEDGER_STATES.map(async (state) => (await store.query({ state, limit: limitPerState })).length),
      );
      const stats = { total: 0 } as LedgerStats;
      LEDGER_STATES.forEach((state, i) => {
        stats[state] = counts[i]!;
        stats.total += counts[i]!;
      });
      return stats;
    },
  };
}
