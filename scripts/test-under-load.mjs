#!/usr/bin/env node
// `npm run test:under-load [-- --runs 5] [--burners 2] [-- <vitest args>]`: the suite's flake
// check (docs/testing.md#a-suite-that-does-not-flake). Runs `vitest run` the given number of times
// in a row while as many busy-looping processes as the machine has CPUs keep every CPU busy, and
// stops at the first failing run. No retries: a test that needs one fails here.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

const args = process.argv.slice(2);
const split = args.indexOf('--');
const own = split >= 0 ? args.slice(0, split) : args;
const vitestArgs = split >= 0 ? args.slice(split + 1) : [];
const option = (flag, fallback) => {
  const i = own.indexOf(flag);
  if (i < 0) return fallback;
  const value = Number(own[i + 1]);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${flag} takes a whole number (got ${own[i + 1]})`);
    process.exit(2);
  }
  return value;
};
const runs = option('--runs', 5);
const burnerCount = option('--burners', availableParallelism());

const burners = Array.from({ length: burnerCount }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
const stopBurners = () => {
  for (const burner of burners) burner.kill('SIGKILL');
};
process.on('exit', stopBurners);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopBurners();
    process.exit(130);
  });
}

/** One `vitest run`, its output passed through: resolves with its exit code. */
function runSuite() {
  return new Promise((resolve) => {
    const child = spawn('npx', ['vitest', 'run', ...vitestArgs], { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

console.log(`test under load: ${runs} run(s) of vitest beside ${burnerCount} busy process(es)`);
const results = [];
for (let run = 1; run <= runs; run++) {
  const started = Date.now();
  const code = await runSuite();
  const seconds = Math.round((Date.now() - started) / 1000);
  results.push({ run, code, seconds });
  console.log(
    `\n== run ${run} of ${runs}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds} s\n`,
  );
  if (code !== 0) break;
}
stopBurners();
for (const r of results) console.log(`run ${r.run}: ${r.code === 0 ? 'passed' : 'failed'}, ${r.seconds} s`);
const passed = results.filter((r) => r.code === 0).length;
console.log(`${passed} of ${runs} run(s) passed in a row`);
process.exit(passed === runs ? 0 : 1);
