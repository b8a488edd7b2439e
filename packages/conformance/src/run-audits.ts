import { AuditFailure } from './audit-failure';
import { AUDITS } from './audits/index';
import { AUDIT_PATHS, type AuditFixture, createAuditFixture } from './fixture';
import { RateLimited, send, TargetUnreachable } from './http';
import { type AuditResult, oneLine } from './results';
import type { Audit, AuditContext, AuditPaths, AuditProfile, ReplayMode } from './types';

export type { AuditResult } from './results';

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

export interface RunAuditsOptions {
  /** Default: every audit of the profile. */
  audits?: readonly Audit[];
  /**
   * `x402`: only the rules of the x402 specification, which any x402 server must keep;
   * `tollbooth` (default): those and Tollbooth's own profile.
   */
  profile?: AuditProfile;
  /**
   * The target's replay mode (docs/ledger.md#replay-a-stance): the audits of the other mode are
   * skipped, and a target built around the fixture is built in this one. Default `stored-answer`.
   */
  replay?: ReplayMode;
  /** How long one audit may wait out 429 answers in all before it is reported `rate_limited`. Default 0. */
  rateLimitWaitMs?: number;
  /** Called before each wait for a 429 to pass. */
  onRateLimitWait?(ms: number, what: string): void;
  /** Called after each audit, e.g. to print progress. */
  onResult?(result: AuditResult): void;
}

const describe = (audit: Audit) => ({
  id: audit.id,
  level: audit.level,
  profile: audit.profile,
  sentence: audit.sentence,
});

/**
 * The audits a profile selects, the x402 specification's first: `x402` only those, `tollbooth`
 * those and then Tollbooth's own.
 */
export function auditsOf(profile: AuditProfile, audits: readonly Audit[] = AUDITS): Audit[] {
  const x402 = audits.filter((audit) => audit.profile === 'x402');
  return profile === 'x402' ? x402 : [...x402, ...audits.filter((audit) => audit.profile === 'tollbooth')];
}

/** Runs one audit against a target; never throws for a failing or unreachable target. */
export async function runAudit(
  audit: Audit,
  target: AuditTarget,
  options: Pick<RunAuditsOptions, 'rateLimitWaitMs' | 'onRateLimitWait' | 'replay'> = {},
): Promise<AuditResult> {
  const replay = options.replay ?? 'stored-answer';
  if (audit.replay !== undefined && audit.replay !== replay) {
    const message = `for servers with replay '${audit.replay}' (this one is audited as '${replay}')`;
    return { ...describe(audit), status: 'skipped', message };
  }
  const fetchFn = target.fetch ?? globalThis.fetch;
  const rateLimit = {
    maxWaitMs: options.rateLimitWaitMs ?? 0,
    waitedMs: 0,
    ...(options.onRateLimitWait ? { onWait: options.onRateLimitWait } : {}),
  };
  let ctx: AuditContext;
  let server: AuditServer | undefined;
  if ('start' in target) {
    const fixture = createAuditFixture({ replay });
    server = await target.start(fixture);
    ctx = {
      baseUrl: server.baseUrl,
      fetch: fetchFn,
      paths: { ...AUDIT_PATHS },
      control: fixture.control,
      replay,
      rateLimit,
    };
  } else {
    const missing = (audit.uses ?? []).filter((name) => !target.paths[name]);
    if (audit.needs === 'control')
      return { ...describe(audit), status: 'skipped', message: 'needs a controllable target' };
    if (missing.length > 0)
      return { ...describe(audit), status: 'skipped', message: `no ${missing.join(', ')} path given` };
    ctx = { baseUrl: target.url, fetch: fetchFn, paths: target.paths, replay, rateLimit };
  }
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    await audit.run(ctx);
    return { ...describe(audit), status: 'passed', ms: ms() };
  } catch (error) {
    if (error instanceof AuditFailure)
      return { ...describe(audit), status: 'failed', message: error.message, ms: ms() };
    if (error instanceof RateLimited)
      return { ...describe(audit), status: 'rate_limited', message: error.message, ms: ms() };
    const message = error instanceof TargetUnreachable ? error.message : `could not run: ${oneLine(error)}`;
    return { ...describe(audit), status: 'error', message, ms: ms() };
  } finally {
    await server?.close();
  }
}

/**
 * Checks that a running target answers at all (any HTTP status will do).
 * @throws TargetUnreachable with one line naming the address and the reason.
 */
export async function probeServer(url: string, path: string, fetchFn: typeof fetch = fetch): Promise<void> {
  await send(
    { baseUrl: url, fetch: fetchFn, paths: { paid: path }, rateLimit: { maxWaitMs: 0, waitedMs: 0 } },
    path,
  ).catch((error: unknown) => {
    if (error instanceof RateLimited) return;
    throw error;
  });
}

/**
 * Runs the audits one after another against a target. A running target is probed first.
 *
 * @throws TargetUnreachable when a running target does not answer at all.
 * @example
 * const results = await runAudits({ url: 'http://localhost:4021', paths: { paid: '/api/v1/fees/now' } });
 * const failed = results.filter((r) => r.status === 'failed');
 */
export async function runAudits(target: AuditTarget, options: RunAuditsOptions = {}): Promise<AuditResult[]> {
  if ('url' in target) await probeServer(target.url, target.paths.paid, target.fetch);
  const results: AuditResult[] = [];
  let unreachable: string | undefined;
  for (const audit of options.audits ?? auditsOf(options.profile ?? 'tollbooth')) {
    // Once the target stops answering, the rest is not run (each would wait for the same error).
    const result = unreachable
      ? { ...describe(audit), status: 'error' as const, message: `not run: ${unreachable}` }
      : await runAudit(audit, target, options);
    if (result.status === 'error' && result.message?.startsWith('cannot reach'))
      unreachable ??= result.message;
    options.onResult?.(result);
    results.push(result);
  }
  return results;
}
