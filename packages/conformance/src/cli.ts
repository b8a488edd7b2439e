#!/usr/bin/env node
import { processIo } from './cli/io';
// tollbooth-conformance: `<url> --paid <path>` audits a running x402 resource server,
// `facilitator <url>` audits a facilitator on a real chain. See cli/main.ts.
import { main } from './cli/main';

main(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A defect of the kit itself: one line, and the stack only when asked for.
    console.error(`tollbooth-conformance: ${error instanceof Error ? error.message : String(error)}`);
    if (process.env['DEBUG'] && error instanceof Error) console.error(error.stack);
    process.exitCode = 2;
  },
);
