// Runs a package command from its TypeScript source, for the command launchers in packages/*/bin/
// (docs/packaging.md#commands). A launcher calls this only in a clone of the repository, where
// src/ exists (tarballs ship dist/ alone): there `npx tollbooth-pay` works right after
// `npm install`, with no build, and never runs a stale one.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs `source` (a file URL) with the arguments this process got; exits as the child exits. */
export function runSourceCommand(source) {
  const args = [
    '--conditions=tollbooth-source',
    '--import',
    import.meta.resolve('tsx'),
    fileURLToPath(source),
    ...process.argv.slice(2),
  ];
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  // A signal sent to this process alone (kill <pid>) must reach the command, so that it can stop
  // what it started (a devnet's anvil, a server) instead of being orphaned.
  const forward = (signal) => child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    for (const name of FORWARDED) process.off(name, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
