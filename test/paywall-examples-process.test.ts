// The three paywall examples as programs (`npm start -w examples/<name>`): a busy port is one line
// on stderr and exit 1 with no listening line; SIGTERM stops the server and the local chain, and
// neither leaves a process behind.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

interface Run {
  child: ChildProcess;
  /** A value in the environment of the example and everything it starts. */
  tag: string;
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

function startExample(name: string, port: number): Run {
  const tag = `${name}-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const child = spawn(
    process.execPath,
    ['--conditions=tollbooth-source', '--import', 'tsx', join(root, 'examples', name, 'src', 'index.ts')],
    {
      cwd: root,
      env: { ...process.env, PORT: String(port), TOLLBOOTH_EXAMPLE_TAG: tag, FACILITATOR_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, tag, exited, output: () => ({ stdout, stderr }) };
}

/** Processes still running that the example started (anvil), found by the tag they inherited. */
function leftovers(tag: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(`TOLLBOOTH_EXAMPLE_TAG=${tag}\0`))
        found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * The first match of `pattern` in what `child` prints, as soon as it is printed (call it right
 * after spawning, before any output is read); rejects when its output ends without one. No
 * deadline: how long a loaded machine takes is not the verdict, and the test's timeout guards hangs.
 */
function printed(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer | string) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) resolve(match);
    });
    child.stdout!.once('end', () => reject(new Error(`output ended without ${pattern}: ${seen}`)));
  });
}

/** The paid URL the example prints once it listens. */
async function listeningUrl(run: Run): Promise<string> {
  return (await printed(run.child, /GET (http:\/\/\S+\/joke)/))[1]!;
}

let busy: Server;
let busyPort: number;
beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

const EXAMPLES = ['express-paywall', 'fastify-paywall', 'koa-paywall'];
const runs: Run[] = [];
afterAll(() => {
  // Whatever a failed test left running: the example, then what it started.
  for (const run of runs) {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    for (const pid of leftovers(run.tag)) process.kill(pid, 'SIGKILL');
  }
});

// The three examples run side by side: each test waits mostly for tsx and anvil to start.
describe('the paywall examples as programs', { concurrent: true, timeout: 60_000 }, () => {
  it.each(EXAMPLES)(
    '%s: a busy port is one line, exit 1, no listening line and no anvil left',
    async (name) => {
      const run = startExample(name, busyPort);
      runs.push(run);
      expect(await run.exited).toBe(1);
      const { stdout, stderr } = run.output();
      expect(stderr).toBe(`port ${busyPort} is in use: set PORT to a free port\n`);
      expect(stdout).not.toContain('GET http');
      expect(leftovers(run.tag)).toEqual([]);
    },
  );

  it.each(EXAMPLES)(
    '%s: serves the paywall, then SIGTERM stops the server and the local chain',
    async (name) => {
      const run = startExample(name, 0);
      runs.push(run);
      const url = await listeningUrl(run);
      expect((await fetch(url)).status).toBe(402);
      expect(leftovers(run.tag).length).toBeGreaterThanOrEqual(2); // the example and its anvil
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.output().stderr).toBe('');
      expect(leftovers(run.tag)).toEqual([]);
    },
  );
});
