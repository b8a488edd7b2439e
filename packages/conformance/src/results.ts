// One result shape for every audit the kit runs (resource servers and facilitators), and how a
// run's results become an exit status.
import type { AuditLevel, AuditProfile } from './types';

/**
 * - `passed` / `failed`: the target keeps / breaks the rule;
 * - `skipped`: the audit does not apply (a path or capability the target lacks);
 * - `rate_limited`: the target kept answering 429 past the wait allowed, so the rule was not judged;
 * - `error`: the audit could not run (the target stopped answering, a setup step failed).
 */
export type AuditStatus = 'passed' | 'failed' | 'skipped' | 'rate_limited' | 'error';

export interface AuditResult {
  id: string;
  level: AuditLevel;
  /** `x402`: a rule of the x402 specification (or the official packages); `tollbooth`: Tollbooth's own profile. */
  profile: AuditProfile;
  sentence: string;
  status: AuditStatus;
  /** Why it failed, was skipped or could not run. One line, never a stack trace. */
  message?: string;
  /** How long the audit took, in milliseconds. */
  ms?: number;
}

export interface AuditSummary {
  passed: number;
  failed: number;
  skipped: number;
  rateLimited: number;
  errors: number;
  /** MUST audits that failed. */
  mustFailed: number;
  /** MUST audits that could not be judged (rate limited or not run). */
  mustUnjudged: number;
}

export function summarize(results: readonly AuditResult[]): AuditSummary {
  const count = (status: AuditStatus) => results.filter((r) => r.status === status).length;
  const must = results.filter((r) => r.level === 'MUST');
  return {
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    rateLimited: count('rate_limited'),
    errors: count('error'),
    mustFailed: must.filter((r) => r.status === 'failed').length,
    mustUnjudged: must.filter((r) => r.status === 'rate_limited' || r.status === 'error').length,
  };
}

/** Exit status of a run: 1 when a MUST failed, else 2 when a MUST could not be judged, else 0. */
export function exitCodeOf(results: readonly AuditResult[]): 0 | 1 | 2 {
  const summary = summarize(results);
  if (summary.mustFailed > 0) return 1;
  return summary.mustUnjudged > 0 ? 2 : 0;
}

/** One line describing any thrown value, without a stack trace. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.message}` : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}
