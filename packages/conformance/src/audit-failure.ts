/** Thrown by an audit whose rule the target breaks. */
export class AuditFailure extends Error {
  override readonly name = 'AuditFailure';
  readonly code = 'audit_failed';
}

/** Fails the audit with `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AuditFailure(message);
}

/** A value in a failure message: JSON, with a bigint (a balance, an amount) as its digits. */
function show(value: unknown): string {
  return typeof value === 'bigint'
    ? String(value)
    : (JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) ?? String(value));
}

/** Fails unless `actual === expected`, naming `what`. */
export function checkEqual<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) {
    throw new AuditFailure(`${what}: expected ${show(expected)}, got ${show(actual)}`);
  }
}
