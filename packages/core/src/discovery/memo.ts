import {
  currentTable,
  type DiscoverableTable,
  type TableSource,
  tableFingerprint,
  tableId,
} from './route-view';

/** A value derived from the route table, rebuilt only when the table changes. */
export interface TableMemo<T> {
  /** The value for the current table, rebuilt if a route's price or availability changed. */
  get(): T;
  /** Forces a rebuild on the next `get()`. */
  invalidate(): void;
}

/**
 * Memoises `build(table)` against the table's identity and fingerprint, so documents are built
 * once and rebuilt after `setAvailability`, a recompiled table or `invalidate()`.
 */
export function memoByTable<T>(source: TableSource, build: (table: DiscoverableTable) => T): TableMemo<T> {
  let cached: { id: number; fingerprint: string; value: T } | undefined;
  return {
    get() {
      const table = currentTable(source);
      const id = tableId(table);
      const fingerprint = tableFingerprint(table);
      if (cached && cached.id === id && cached.fingerprint === fingerprint) return cached.value;
      const value = build(table);
      cached = { id, fingerprint, value };
      return value;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
