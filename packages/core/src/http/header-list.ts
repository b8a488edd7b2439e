/**
 * A comma-separated header value (`Access-Control-Expose-Headers`, `Vary`) with the names of
 * `added` it lacks appended, compared case-insensitively. `existing` may be missing, a string or
 * a list of values, as frameworks hold headers.
 *
 * @example
 * mergeHeaderList('X-Trace', 'PAYMENT-REQUIRED, X-Trace') // 'X-Trace, PAYMENT-REQUIRED'
 */
export function mergeHeaderList(existing: unknown, added: string): string {
  if (existing === undefined || existing === null || existing === '') return added;
  const current = Array.isArray(existing) ? existing.join(', ') : String(existing);
  if (current === added) return added;
  const have = new Set(current.split(',').map((s) => s.trim().toLowerCase()));
  const missing = added.split(',').filter((s) => !have.has(s.trim().toLowerCase()));
  return missing.length === 0 ? current : `${current}, ${missing.map((s) => s.trim()).join(', ')}`;
}
