/**
 * The first error in `error`'s cause chain (`error`, its `cause`, the cause's `cause`, …) that
 * matches `predicate`, or `undefined`. Only `Error` instances are visited: the walk stops at a
 * cause that is not an `Error`, and at a cause already visited (a cycle).
 *
 * @example
 * const refused = walk(error, (e) => (e as { code?: string }).code === 'ECONNREFUSED');
 */
export function walk<T extends Error = Error>(
  error: unknown,
  predicate: ((error: Error) => error is T) | ((error: Error) => boolean),
): T | undefined {
  const seen = new Set<Error>();
  for (let current = error; current instanceof Error && !seen.has(current); current = current.cause) {
    if (predicate(current)) return current as T;
    seen.add(current);
  }
  return undefined;
}
