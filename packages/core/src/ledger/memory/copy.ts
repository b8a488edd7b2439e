// How the memory store keeps its own copies of what it is given and hands out: deep copies of
// JSON values and byte arrays, and the parts written once (payload, requirements) deep-frozen and
// shared instead of copied.
import type { LedgerEntry } from '../types';

/**
 * Parts of entries the store has deep-copied and deep-frozen itself (roots only): immutable all the
 * way down, so entries handed out can share them instead of copying them.
 */
const sealed = new WeakSet<object>();

/**
 * Deep copy of what the ledger holds (JSON values and byte arrays), several times faster than
 * `structuredClone`. Byte arrays come back as plain `Uint8Array`s, as with `structuredClone`;
 * anything else that is not a plain object or array goes through it. Sealed parts are shared.
 */
export function copy<T>(value: T): T {
  if (value === null || typeof value !== 'object' || sealed.has(value)) return value;
  if (Array.isArray(value)) return value.map(copy) as T;
  if (value instanceof Uint8Array) return new Uint8Array(value) as T;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) put(out, key, copy((value as Record<string, unknown>)[key]));
  return out as T;
}

/**
 * `out[key] = value`, except that an own `__proto__` key (which `JSON.parse` makes from a client's
 * payload) stays an own property instead of setting the copy's prototype.
 */
export function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    out[key] = value;
  }
}

/** Set by {@link frozenCopy} when it meets a part that cannot be frozen. */
let meltable = false;

/** {@link copy} with every plain object and array frozen; byte arrays and exotic objects copied as they are. */
function frozenCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy));
  const proto = Object.getPrototypeOf(value);
  if (value instanceof Uint8Array || (proto !== Object.prototype && proto !== null)) {
    meltable = true;
    return copy(value);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) put(out, key, frozenCopy((value as Record<string, unknown>)[key]));
  return Object.freeze(out);
}

/**
 * The store's private copy of a part of an entry that the gate writes once and only reads
 * afterwards (payload, requirements). When it holds nothing that can't be frozen (byte arrays,
 * exotic objects), it is deep-frozen and sealed: one copy when stored, none when handed out.
 * Otherwise it is copied on the way out like everything else.
 */
export function seal<T>(value: T): T {
  if (value === null || typeof value !== 'object' || sealed.has(value)) return value;
  meltable = false;
  const out = frozenCopy(value) as T & object;
  if (!meltable) sealed.add(out);
  return out;
}

/** Fields stored sealed: written at claim time and only read afterwards. */
export const SEALED_FIELDS: ReadonlySet<string> = new Set(['payload', 'requirements']);

/** The store's own copy of an entry given to it: payload and requirements sealed, the rest copied. */
export function ingest(entry: LedgerEntry): LedgerEntry {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(entry)) {
    const value = (entry as unknown as Record<string, unknown>)[key];
    put(out, key, SEALED_FIELDS.has(key) ? seal(value) : copy(value));
  }
  return out as unknown as LedgerEntry;
}
