// The two commands of the README: `npm start` logs the base URL and serves the preview until
// SIGTERM; `npm run demo` pays for a decision and exits 0 — the running service when one runs
// (`--url` from the repository root, or the local port), else a stack it starts itself. An agent
// pays tools over MCP (`/mcp`) on the same `npm start` process.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { anvilAccount } from '@tollbooth/devnet';
import { createEvmPaymentSigner } from '@tollbooth/fetch';
import { createPayingMcpClient } from '@tollbooth/fetch/mcp';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';

const workspace = join(import.meta.dirname, '..');
const root = join(workspace, '..', '..');
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
function run(
  script: string,
  env: Record<string, string>,
  direct = false,
  extra: string[] = [],
  cwd = workspace,
) {
  const scripts = JSON.parse(readFileSync(join(workspace, 'package.json'), 'utf8')).scripts as Record<
    string,
    string
  >;
  const [command, ...args] = direct
    ? scripts[script]!.split(' ')
    : ['npm', 'run', '--silent', script, ...(extra.length > 0 ? ['--', ...extra] : [])];
  const child = spawn(command!, args, {
    cwd,
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

/** Resolves with the first JSON log line of `child` whose msg is `msg`. */
function logLine(started: ReturnType<typeof run>, msg: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const check = () => {
      for (const line of started.output().split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry['msg'] === msg) return resolve(entry);
      }
    };
    started.child.stdout!.on('data', check);
    started.child.once('close', () => reject(new Error(`exited before "${msg}": ${started.output()}`)));
    check();
  });
}

describe('commands', () => {
  it('npm start logs JSON lines only when not on a terminal, serves on the logged base URL, is paid by npm run demo and by an agent over MCP, and stops cleanly on SIGTERM', async () => {
    const started = run(
      'start',
      { PORT: '0', LOG_LEVEL: 'info', LEDGER_URL: `sqlite:${join(scratch, 'start.sqlite')}` },
      true,
    );
    // Start-up runs the simulated chain 36 hours forward for the observatory (seconds of CPU): on
    // a shared machine that can take long; the verdict is that it listens, not how fast.
    const listening = String((await logLine(started, 'fee service listening'))['url']);
    expect(listening).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const preview = await fetch(`${listening}/api/v1/fees/preview`);
    expect(preview.status).toBe(200);
    // The dashboard and every file it loads come from the service itself.
    const dashboard = await fetch(`${listening}/`);
    expect(dashboard.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await dashboard.text();
    const files = [...page.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(files).toHaveLength(6);
    for (const file of files) expect((await fetch(`${listening}${file}`)).status, file).toBe(200);
    expect(page).not.toMatch(/(?:src|href)="https?:/);

    // From the repository root, `--url` reaches the demo: it pays this instance, not one of its own.
    const byUrl = run('demo', {}, false, ['--url', listening], root);
    expect(await byUrl.exited, byUrl.output()).toBe(0);
    expect(byUrl.output()).toContain(`Paying the fee service at ${listening}`);
    expect(byUrl.output()).not.toContain('in-process');
    // Without `--url`, the demo pays the service running on the local port.
    const port = new URL(listening).port;
    const local = run('demo', { PORT: port });
    expect(await local.exited, local.output()).toBe(0);
    expect(local.output()).toContain(`Paying the fee service running at ${listening}`);
    const settled = await logLine(started, 'payment settled');
    expect(settled['transaction']).toMatch(/^0x[0-9a-f]{64}$/);
    const transactions = started
      .output()
      .split('\n')
      .filter((line) => line.includes('"payment settled"'))
      .map((line) => (JSON.parse(line) as { transaction: string }).transaction);
    expect(transactions.sort(), 'the two demos settled on the running instance').toEqual(
      [
        ...byUrl.output().matchAll(/Paid 0\.001 USDC in transaction (0x[0-9a-f]{64})/g),
        ...local.output().matchAll(/Paid 0\.001 USDC in transaction (0x[0-9a-f]{64})/g),
      ]
        .map((m) => m[1]!)
        .sort(),
    );

    // An agent over MCP against the same process: the MCP SDK's client lists the tools with their
    // prices, calls the free preview and pays the decision and two catalog tools (a second payer).
    const agent = new Client({ name: 'agent', version: '1.0.0' });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${listening}/mcp`)));
    try {
      const { tools } = await agent.listTools();
      const priced = tools.filter((tool) => tool._meta?.['tollbooth/price']).map((tool) => tool.name);
      expect(priced).toEqual(
        expect.arrayContaining(['get_fee_timing_decision', 'get_next_block', 'get_fee_landscape']),
      );
      const payer = createPayingMcpClient({
        client: agent,
        signer: createEvmPaymentSigner({ account: privateKeyToAccount(anvilAccount(4).privateKey) }),
        maxAmountPerPayment: 10_000n,
        maxTotal: 16_000n,
      });
      expect((await payer.callTool({ name: 'get_fee_preview' })).payload).toBeUndefined();
      for (const name of ['get_fee_timing_decision', 'get_next_block', 'get_fee_landscape'])
        expect((await payer.callTool({ name })).receipt, name).toMatchObject({ success: true });
      expect(payer.spent).toBe(16_000n);
      expect(new Set(payer.receipts.map((r) => r.transaction)).size).toBe(3);
    } finally {
      await agent.close();
    }

    // An explicit URL where nothing answers: one line, exit 1, no stack.
    const nowhere = run('demo', {}, false, ['--url', 'http://127.0.0.1:9']);
    expect(await nowhere.exited).toBe(1);
    expect(nowhere.output()).toContain('No fee service answers at http://127.0.0.1:9');
    expect(nowhere.output()).not.toMatch(/\n\s+at /);

    // Only JSON lines on stdout: no banner between them when stdout is not a terminal.
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    const stdout = started.output().trim().split('\n');
    for (const line of stdout) expect(() => JSON.parse(line), line).not.toThrow();
    expect(stdout.some((line) => line.includes('"signal":"SIGTERM"'))).toBe(true);
  }, 900_000);

  it('npm run demo with no service running prints the challenge, the payment, the decision and the receipt, and exits 0', async () => {
    // PORT 0: no service can be running there, so the demo starts its own.
    const demo = run('demo', { PORT: '0' });
    expect(await demo.exited, demo.output()).toBe(0);
    const output = demo.output();
    expect(output).toContain('Starting the fee service in-process');
    expect(output).toContain('402 Payment Required');
    expect(output).toContain('PAYMENT-REQUIRED (decoded)');
    expect(output).toContain('PAYMENT-SIGNATURE authorization');
    expect(output).toMatch(/"decision": "(send|wait)"/);
    expect(output).toMatch(/"transaction_hash": "0x[0-9a-f]{64}"/);
    expect(output).toMatch(/Paid 0\.001 USDC in transaction 0x[0-9a-f]{64}/);
  }, 600_000);
});
