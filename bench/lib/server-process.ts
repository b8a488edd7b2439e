// The parent side: each benchmark server runs in its own Node process, started the way the runner
// was (`npm run bench`: the built packages; `npm run bench:source`: the TypeScript sources), so a
// server never shares an event loop with autocannon.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { CpuSample } from './serve';

export interface ServerProcess {
  name: string;
  url: string;
  port: number;
  /** Other `KEY=value` lines the server printed before its port. */
  info: Record<string, string>;
  child: ChildProcess;
  cpu(): Promise<CpuSample>;
  stop(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * V8 flags every benchmark server runs with. The young generation is held at its largest size
 * (16 MB a semi-space, V8's own maximum on this 64-bit Node): between its runs a server sits idle
 * while the other cases run, V8's memory reducer then shrinks the young generation, and under
 * load it may stay small for the rest of the process's life, so one process of a case ran up to
 * twice as slow as its twin started the same way (measured with `--trace-gc` on bare Fastify:
 * 165 scavenges for 243k requests before 40 s idle, 634 for 257k after). A server under steady
 * load keeps its young generation large; this measures every case, bare ones included, so.
 * `BENCH_NODE_FLAGS` replaces them (empty for V8's defaults).
 */
export const SERVER_NODE_FLAGS = (process.env['BENCH_NODE_FLAGS'] ?? '--min-semi-space-size=16')
  .split(' ')
  .filter(Boolean);

/** Whether this run resolves `@tollbooth/*` to sources (the runner's `--conditions`), not to dist. */
export const FROM_SOURCE = process.execArgv.some((arg) => arg.includes('tollbooth-source'));

export interface SpawnServerOptions {
  args?: string[];
  env?: Record<string, string>;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  timeoutMs?: number;
}

/** Starts `bench/servers/<file>.ts` and resolves once it printed its port. */
export async function spawnServer(
  name: string,
  file: string,
  options: SpawnServerOptions = {},
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [
      ...SERVER_NODE_FLAGS,
      ...(options.nodeFlags ?? []),
      ...(FROM_SOURCE ? ['--conditions=tollbooth-source'] : []),
      '--import',
      'tsx',
      `bench/servers/${file}.ts`,
      ...(options.args ?? []),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production', ...options.env },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  const info: Record<string, string> = {};
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => reject(new Error(`${name}: no port within ${options.timeoutMs ?? 30_000} ms`)),
      options.timeoutMs ?? 30_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name}: exited with ${code} before printing its port`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        const [key, ...rest] = line.split('=');
        if (key === 'PORT') {
          clearTimeout(timer);
          resolve(Number(rest.join('=')));
        } else if (key && rest.length > 0) info[key] = rest.join('=');
        newline = buffered.indexOf('\n');
      }
    });
  });
  child.stdout!.resume();
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  return {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    info,
    child,
    cpu: () =>
      new Promise<CpuSample>((resolve, reject) => {
        const onMessage = (message: unknown) => {
          const m = message as CpuSample & { type?: string };
          if (m?.type !== 'cpu') return;
          child.off('message', onMessage);
          resolve({ user: m.user, system: m.system, requests: m.requests, at: m.at });
        };
        child.on('message', onMessage);
        if (!child.send({ type: 'cpu' })) reject(new Error(`${name}: IPC closed`));
      }),
    stop: async () => {
      if (exited) return;
      const done = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(timer);
    },
  };
}
