// tollbooth-conformance [server] <url> --paid <path>: the resource-server audits that need only
// HTTP, against any running x402 server.
import { parseArgs } from 'node:util';
import { TargetUnreachable } from '../http';
import { createHumanPrinter, summaryLine } from '../report/human';
import { renderJunit } from '../report/junit';
import { type AuditResult, exitCodeOf, summarize } from '../results';
import { auditsOf, probeServer, runAudits } from '../run-audits';
import type { AuditPaths, AuditProfile } from '../types';
import { type CliIo, parseCommand, secondsOption, UsageError } from './io';

export const SERVER_USAGE = `Usage: tollbooth-conformance [server] <url> --paid <path> [options]

Audits a running x402 resource server over HTTP.

Paths:
  --paid <path>         a paid route (required), e.g. /api/v1/fees/now
  --free <path>         a free route
  --paused <path>       a paused paid route (Tollbooth profile)
  --retired <path>      a retired paid route (Tollbooth profile)
  --canonical <path>    a paid route that only accepts its canonical URL (may be the --paid one)

Options:
  --profile <name>      x402 (default): the x402 specification's rules, which any x402 server
                        must keep; tollbooth: those and Tollbooth's own profile (error codes,
                        HEAD, CORS, paths, availability)
  --rate-limit-wait <s> how long one audit may wait out 429 answers (Retry-After) before it is
                        reported rate limited (default 90)
  --json                print the report as JSON instead of the table
  --junit <file>        also write the report as JUnit XML
  -h, --help            this text

Exit status: 0 every MUST rule that applies is kept; 1 a MUST rule is broken; 2 a usage error,
an unreachable target, or a MUST rule that could not be judged (rate limited, not run).`;

const PROFILES: Record<AuditProfile, string> = {
  x402: 'x402 specification',
  tollbooth: 'Tollbooth profile (beyond the x402 specification)',
};

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      paid: { type: 'string' },
      free: { type: 'string' },
      paused: { type: 'string' },
      retired: { type: 'string' },
      canonical: { type: 'string' },
      profile: { type: 'string' },
      'rate-limit-wait': { type: 'string' },
      json: { type: 'boolean' },
      junit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true as const };
  const url = positionals[0];
  if (positionals.length !== 1 || !url || !/^https?:\/\/[^/]/.test(url))
    throw new UsageError('one http(s) URL of the server is required');
  if (!values.paid?.startsWith('/')) throw new UsageError('--paid /path is required');
  const paths: AuditPaths = { paid: values.paid };
  for (const name of ['free', 'paused', 'retired', 'canonical'] as const) {
    const path = values[name];
    if (path === undefined) continue;
    if (!path.startsWith('/')) throw new UsageError(`--${name} must be a path starting with /`);
    paths[name] = path;
  }
  const profile = values.profile ?? 'x402';
  if (profile !== 'x402' && profile !== 'tollbooth') throw new UsageError('--profile is x402 or tollbooth');
  return {
    help: false as const,
    url: new URL(url).origin,
    paths,
    profile: profile as AuditProfile,
    rateLimitWaitMs: secondsOption(values['rate-limit-wait'], '--rate-limit-wait', 90),
    json: values.json === true,
    junit: values.junit,
  };
}

export async function serverCommand(argv: string[], io: CliIo): Promise<number> {
  const options = parseCommand(argv, parse, SERVER_USAGE, io);
  if (typeof options === 'number') return options;
  const { url, paths, profile, json } = options;
  try {
    await probeServer(url, paths.paid);
  } catch (error) {
    io.err(`tollbooth-conformance: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  if (!json)
    io.out(
      `Auditing ${url} against the ${profile === 'x402' ? 'x402 specification' : 'x402 specification and the Tollbooth profile'}`,
    );
  const print = createHumanPrinter(io.out, (r) => PROFILES[r.profile]);
  // The others need a server built around the audit fixture (its scripted facilitator double).
  const audits = auditsOf(profile).filter((audit) => audit.needs === 'server');
  let results: AuditResult[];
  try {
    results = await runAudits(
      { url, paths },
      {
        audits,
        rateLimitWaitMs: options.rateLimitWaitMs,
        onRateLimitWait: (ms, what) =>
          io.err(`rate limited: waiting ${Math.ceil(ms / 1000)} s as the server asks (${what})`),
        onResult: (result) => {
          if (!json) print(result);
        },
      },
    );
  } catch (error) {
    if (error instanceof TargetUnreachable) {
      io.err(`tollbooth-conformance: ${error.message}`);
      return 2;
    }
    throw error;
  }
  const exitCode = exitCodeOf(results);
  if (json) {
    io.out(
      JSON.stringify(
        { kind: 'server', target: url, paths, profile, results, summary: summarize(results), exitCode },
        null,
        2,
      ),
    );
  } else {
    io.out('');
    io.out(summaryLine(results));
  }
  if (options.junit) {
    const suites = (['x402', 'tollbooth'] as const)
      .map((p) => ({ name: PROFILES[p], results: results.filter((r) => r.profile === p) }))
      .filter((suite) => suite.results.length > 0);
    io.writeFile(options.junit, renderJunit('tollbooth-conformance server', suites));
  }
  return exitCode;
}
