#!/usr/bin/env node
// tollbooth-conformance <url> --paid <path>: runs the audits that need no control (challenge,
// decoding, CORS, preflight, availability, free routes, path tricks) against a running server.
import { parseArgs } from 'node:util';
import { runAudits } from './run-audits';
import type { AuditPaths } from './types';

const USAGE = `Usage: tollbooth-conformance <url> --paid <path> [options]

Runs the resource-server audits that need only HTTP against a running server.

Options:
  --paid <path>       a paid route (required), e.g. /api/v1/fees/now
  --free <path>       a free route
  --paused <path>     a paused paid route
  --retired <path>    a retired paid route
  --canonical <path>  a paid route that only accepts its canonical URL
  --json              print the results as JSON
  -h, --help          this text

Exit status: 0 when every MUST audit passed, 1 when one failed, 2 on a usage error.`;

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const url = positionals[0];
  if (positionals.length !== 1 || !url || !/^https?:\/\//.test(url) || !values.paid?.startsWith('/')) {
    console.error(`an http(s) URL and --paid /path are required\n\n${USAGE}`);
    return 2;
  }
  const paths: AuditPaths = { paid: values.paid };
  for (const name of ['free', 'paused', 'retired', 'canonical'] as const) {
    if (values[name] !== undefined) paths[name] = values[name];
  }
  const results = await runAudits(
    { url: new URL(url).origin, paths },
    {
      onResult(result) {
        if (values.json) return;
        const mark = { passed: 'ok  ', failed: 'FAIL', skipped: 'skip' }[result.status];
        console.log(
          `${mark} ${result.id} ${result.sentence}${result.message ? `\n     ${result.message}` : ''}`,
        );
      },
    },
  );
  const failed = results.filter((r) => r.status === 'failed');
  if (values.json) console.log(JSON.stringify(results, null, 2));
  else {
    const passed = results.filter((r) => r.status === 'passed').length;
    console.log(
      `\n${passed} passed, ${failed.length} failed, ${results.length - passed - failed.length} skipped`,
    );
  }
  return failed.some((r) => r.level === 'MUST') ? 1 : 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      paid: { type: 'string' },
      free: { type: 'string' },
      paused: { type: 'string' },
      retired: { type: 'string' },
      canonical: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
