// --exec: the facilitator or server under audit started by the kit once the chain is up, its
// output passed to stderr, and stopped (its whole process group) when the run ends.
import { type ChildProcess, spawn } from 'node:child_process';

export interface AuditedProcess {
  /** Set when the command exited (before the run ended). */
  readonly exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stop(): Promise<void>;
}

export function startAuditedProcess(
  command: string,
  env: Record<string, string>,
  log: (line: string) => void,
  label = 'facilitator',
): AuditedProcess {
  const child: ChildProcess = spawn('sh', ['-c', command], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let exited: AuditedProcess['exited'];
  const done = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
    child.once('error', (error) => {
      log(`[${label}] could not start: ${error.message}`);
      exited = { code: null, signal: null };
      resolve();
    });
  });
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) log(`[${label}] ${line}`);
    });
  }
  const signal = (name: NodeJS.Signals) => {
    try {
      // The shell and everything it started share the group the detached spawn created.
      if (child.pid !== undefined) process.kill(-child.pid, name);
    } catch {
      // Already gone.
    }
  };
  return {
    get exited() {
      return exited;
    },
    async stop() {
      if (exited) return;
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 5_000);
      await done;
      clearTimeout(timer);
    },
  };
}
