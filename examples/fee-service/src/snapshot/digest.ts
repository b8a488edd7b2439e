import { createHash } from 'node:crypto';
import type { FeeSnapshot } from './types';

/**
 * Canonical JSON: object keys sorted by code unit recursively, no whitespace, `undefined` members
 * dropped, numbers in JavaScript's shortest round-trip form. Non-finite numbers are refused.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('canonical JSON cannot hold a non-finite number');
    return JSON.stringify(value);
  }
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
}

/**
 * `sha256:` + hex SHA-256 of the canonical JSON of the snapshot's content. `fetched_at` is left
 * out on purpose: two instances polling the same upstream state at different moments must publish
 * the same digest; the fetch time is reported beside it in `meta.fetched_at`.
 */
export function snapshotDigest(snapshot: FeeSnapshot): string {
  const { fetched_at: _ignored, ...content } = snapshot;
  const withoutDigest = { ...content } as Record<string, unknown>;
  delete withoutDigest.snapshot_digest;
  return `sha256:${createHash('sha256').update(canonicalJson(withoutDigest)).digest('hex')}`;
}
