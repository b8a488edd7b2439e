/** Thrown by an audit whose rule the target breaks. */
export class AuditFailure extends Error {
  override readonly name = 'AuditFailure';
  readonly code = 'audit_failed';
}

/** Fails the audit with `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AuditFailure(message);
}

/** Fails unless `actual === expected`, naming `what`. */
export function checkEqual<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) {
    throw new AuditFailure(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}
