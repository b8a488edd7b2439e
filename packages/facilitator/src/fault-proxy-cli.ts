#!/usr/bin/env node
// tollbooth-facilitator-fault-proxy: a facilitator behind a switchable fault, as its own process
// (so a test or a soak can SIGKILL it). Once listening it prints one line:
//   tollbooth-facilitator-fault-proxy: <url> -> <target> (mode <mode>, control <url>/__fault)
import { parseArgs } from 'node:util';
import { FACILITATOR_FAULT_MODES, toFaultSetting } from './fault-modes';
import { startFacilitatorFaultProxy } from './fault-proxy';

const USAGE = `usage: tollbooth-facilitator-fault-proxy --target URL [--port 0] [--host 127.0.0.1]
       [--mode pass] [--operations verify,settle,supported] [--slow-supported-ms 5000]
       [--delay-ms 0]
  Modes: ${FACILITATOR_FAULT_MODES.join(', ')}.
  --delay-ms delays every request and every answer that long (a facilitator's network distance).
  GET <url>/__fault shows the mode and counters; PUT it {"mode": "...", "operations": [...]} to switch.

Exit codes: 0 stopped by SIGINT or SIGTERM, 1 could not start (e.g. the port is in use), 2 bad
arguments.`;

const { values } = parseArgs({
  options: {
    target: { type: 'string' },
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    mode: { type: 'string', default: 'pass' },
    operations: { type: 'string' },
    'slow-supported-ms': { type: 'string', default: '5000' },
    'delay-ms': { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const problems: string[] = [];
if (!values.target) problems.push('--target is required');
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push('--port must be a port number');
const slowSupportedMs = Number(values['slow-supported-ms']);
if (!Number.isFinite(slowSupportedMs) || slowSupportedMs < 0)
  problems.push('--slow-supported-ms must be a non-negative number');
const delayMs = Number(values['delay-ms']);
if (!Number.isFinite(delayMs) || delayMs < 0) problems.push('--delay-ms must be a non-negative number');
let mode: ReturnType<typeof toFaultSetting> | undefined;
try {
  mode = toFaultSetting({
    mode: values.mode,
    ...(values.operations ? { operations: values.operations.split(',').map((op) => op.trim()) } : {}),
  });
} catch (error) {
  problems.push(`--mode/--operations: ${(error as Error).message}`);
}
if (problems.length > 0 || !values.target || !mode) {
  process.stderr.write(`${problems.join('\n')}\n\n${USAGE}\n`);
  process.exit(2);
}

const proxy = await startFacilitatorFaultProxy({
  target: values.target,
  mode,
  port,
  host: values.host,
  slowSupportedMs,
  delayMs,
});
process.stdout.write(
  `tollbooth-facilitator-fault-proxy: ${proxy.url} -> ${proxy.target} (mode ${proxy.mode}, control ${proxy.url}/__fault)\n`,
);

const stop = async () => {
  await proxy.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
