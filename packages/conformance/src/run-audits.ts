import { AuditFailure } from './audit-failure';
import { AUDITS } from './audits/index';
import { AUDIT_PATHS, type AuditFixture, createAuditFixture } from './fixture';
import type { Audit, AuditContext, AuditPaths } from './types';

/** A server built by a harness around a fixture; closed after each audit. */
export interface AuditServer {
  /** Origin, e.g. `http://127.0.0.1:40123`. */
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * What the audits run against: a harness that builds a fresh server around each audit's fixture
 * (every audit can run), or a running server given its paths (only `needs: 'server'` audits).
 */
export type AuditTarget =
  | { start(fixture: AuditFixture): Promise<AuditServer>; fetch?: typeof fetch }
  | { url: string; paths: AuditPaths; fetch?: typeof fetch };

export interface AuditResult {
  id: string;
  level: Audit['level'];
  sentence: string;
  status: 'passed' | 'failed' | 'skipped';
  /** Why it failed or was skipped. */
  message?: string;
}

export interface RunAuditsOptions {
  /** Default: every audit. */
  audits?: readonly Audit[];
  /** Called after each audit, e.g. to print progress. */
  onResult?(result: AuditResult): void;
}

const describe = (audit: Audit) => ({ id: audit.id, level: audit.level, sentence: audit.sentence });

/** Runs one audit against a target; never throws for a failing target. */
export async function runAudit(audit: Audit, target: AuditTarget): Promise<AuditResult> {
  const fetchFn = target.fetch ?? globalThis.fetch;
  let ctx: AuditContext;
  let server: AuditServer | undefined;
  if ('start' in target) {
    const fixture = createAuditFixture();
    server = await target.start(fixture);
    ctx = { baseUrl: server.baseUrl, fetch: fetchFn, paths: { ...AUDIT_PATHS }, control: fixture.control };
  } else {
    const missing = (audit.uses ?? []).filter((name) => !target.paths[name]);
    if (audit.needs === 'control')
      return { ...describe(audit), status: 'skipped', message: 'needs a controllable target' };
    if (missing.length > 0)
      return { ...describe(audit), status: 'skipped', message: `no ${missing.join(', ')} path given` };
    ctx = { baseUrl: target.url, fetch: fetchFn, paths: target.paths };
  }
  try {
    await audit.run(ctx);
    return { ...describe(audit), status: 'passed' };
  } catch (error) {
    const message =
      error instanceof AuditFailure
        ? error.message
        : `audit crashed: ${error instanceof Error ? error.stack : String(error)}`;
    return { ...describe(audit), status: 'failed', message };
  } finally {
    await server?.close();
  }
}

/**
 * Runs the audits one after another against a target.
 *
 * @example
 * const results = await runAudits({ url: 'http://localhost:4021', paths: { paid: '/api/v1/fees/now' } });
 * const failed = results.filter((r) => r.status === 'failed');
 */
export async function runAudits(target: AuditTarget, options: RunAuditsOptions = {}): Promise<AuditResult[]> {
  const results: AuditResult[] = [];
  for (const audit of options.audits ?? AUDITS) {
    const result = await runAudit(audit, target);
    options.onResult?.(result);
    results.push(result);
  }
  return results;
}
