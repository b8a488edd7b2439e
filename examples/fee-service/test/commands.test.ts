// The two commands of the README: `npm start` prints the base URL and serves the preview until
// SIGTERM; `npm run demo` pays for a decision and exits 0.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const workspace = join(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'fee-service-commands-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * Runs a package script. `direct` runs its command line without npm in between, so a signal
 * reaches the service itself (npm reports a forwarded SIGTERM as its own death by signal).
 */
function run(script: string, env: Record<string, string>, direct = false) {
  const scripts = JSON.parse(readFileSync(join(workspace, 'package.json'), 'utf8')).scripts as Record<
    string,
    string
  >;
  const [command, ...args] = direct ? scripts[script]!.split(' ') : ['npm', 'run', '--silent', script];
  const child = spawn(command!, args, {
    cwd: workspace,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

describe('commands', () => {
  it('npm start serves the preview on the printed base URL and stops cleanly on SIGTERM', async () => {
    const started = run('start', { PORT: '0', LEDGER_URL: `sqlite:${join(scratch, 'start.sqlite')}` }, true);
    // Start-up runs the simulated chain 36 hours forward for the observatory (seconds of CPU): on
    // a shared machine that can take long; the verdict is that it listens, not how fast.
    const listening = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = /Fee service listening on (http:\/\/[^\s]+)/.exec(started.output());
        if (match) resolve(match[1]!);
      };
      started.child.stdout!.on('data', check);
      started.child.once('close', () => reject(new Error(`exited before listening: ${started.output()}`)));
      check();
    });
    const preview = await fetch(`${listening}/api/v1/fees/preview`);
    expect(preview.status).toBe(200);
    // The dashboard and every file it loads come from the service itself.
    const dashboard = await fetch(`${listening}/`);
    expect(dashboard.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await dashboard.text();
    const files = [...page.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(files).toHaveLength(4);
    for (const file of files) expect((await fetch(`${listening}${file}`)).status, file).toBe(200);
    expect(page).not.toMatch(/(?:src|href)="https?:/);
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
  }, 180_000);

  it('npm run demo prints the challenge, the payment, the decision and the receipt, and exits 0', async () => {
    const demo = run('demo', {});
    expect(await demo.exited, demo.output()).toBe(0);
    const output = demo.output();
    expect(output).toContain('402 Payment Required');
    expect(output).toContain('PAYMENT-REQUIRED (decoded)');
    expect(output).toContain('PAYMENT-SIGNATURE authorization');
    expect(output).toMatch(/"decision": "(send|wait)"/);
    expect(output).toMatch(/"transaction_hash": "0x[0-9a-f]{64}"/);
    expect(output).toMatch(/Paid 0\.001 USDC in transaction 0x[0-9a-f]{64}/);
  }, 180_000);
});
