// `npm start` as its own process for the tests that judge what it prints and how it exits.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const workspace = join(import.meta.dirname, '..', '..');

/** A started `src/main.ts`: its output so far, its exit, its JSON log lines. */
export interface MainProcess {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  exited: Promise<number | null>;
  /** The JSON lines of stdout so far, parsed. */
  logs(): Record<string, unknown>[];
}

/**
 * Runs `src/main.ts` as `npm start` does, with exactly `env` (plus PATH; PORT 0 and LOG_LEVEL info
 * unless `env` says otherwise). Push the child into `children` to kill it after the file.
 */
export function startMain(env: Record<string, string>, children: ChildProcess[]): MainProcess {
  const child = spawn(process.execPath, ['--conditions=tollbooth-source', '--import', 'tsx', 'src/main.ts'], {
    cwd: workspace,
    env: { PATH: process.env['PATH'] ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => {
    out.stdout += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    out.stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs = () =>
    out.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { child, out, exited, logs };
}
