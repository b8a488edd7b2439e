import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveAnvilPath } from './anvil';

const cli = join(dirname(fileURLToPath(import.meta.url)), 'cli.ts');

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

function runCli(args: string[]) {
  const child = spawn(process.execPath, ['--conditions=tollbooth-source', '--import', 'tsx', cli, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

describe('tollbooth-devnet', () => {
  it('prints the chain, token and labelled local keys, serves RPC, and stops cleanly on SIGINT', async () => {
    const run = runCli(['--chain-id', '84532', '--payers', '1']);
    const ready = printed(run.child, /Press Ctrl-C/);
    try {
      await ready;
      const { stdout } = run.output();
      expect(stdout).toContain('Chain id     84532');
      expect(stdout).toContain('0x036CbD53842c5426634e7929541eC2318f3dCF7e');
      expect(stdout).toContain('name "USDC", version "2"');
      expect(stdout).toContain('LOCAL TEST KEYS ONLY');
      expect(stdout).toMatch(/#0 {2}0x90F79bf6EB2c4f870365E785982E1f101E93b906 {2}key 0x[0-9a-f]{64}/);
      expect(stdout).not.toContain('#1 ');
      const rpcUrl = /RPC URL\s+(\S+)/.exec(stdout)?.[1];
      const response = await fetch(rpcUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      expect(((await response.json()) as { result: string }).result).toBe('0x14a34');

      run.child.kill('SIGINT');
      const code = await run.exited;
      expect(code, `signal ${run.child.signalCode}; ${JSON.stringify(run.output())}`).toBe(0);
      expect(run.output().stdout).toContain('stopped');
      await expect(fetch(rpcUrl!, { method: 'POST' })).rejects.toThrow();
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  }, 30_000);

  it('rejects a malformed flag with exit code 2 and the usage', async () => {
    const run = runCli(['--payers', 'many']);
    expect(await run.exited).toBe(2);
    expect(run.output().stderr).toContain('--payers must be a non-negative integer');
    expect(run.output().stderr).toContain('Usage: tollbooth-devnet');
  }, 20_000);

  it('runs the anvil that --anvil names, and stops it on SIGTERM', async () => {
    const anvil = resolveAnvilPath();
    const run = runCli(['--anvil', anvil, '--payers', '0']);
    const ready = printed(run.child, /Press Ctrl-C/);
    try {
      await ready;
      const rpcUrl = /RPC URL\s+(\S+)/.exec(run.output().stdout)?.[1];
      expect(rpcUrl, run.output().stderr).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      run.child.kill('SIGTERM');
      const code = await run.exited;
      expect(code, `signal ${run.child.signalCode}; ${JSON.stringify(run.output())}`).toBe(0);
      await expect(fetch(rpcUrl!, { method: 'POST' })).rejects.toThrow();
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  }, 30_000);

  it('exits 1 with one line naming the error when --anvil is not a file', async () => {
    const run = runCli(['--anvil', '/nonexistent/anvil']);
    expect(await run.exited).toBe(1);
    expect(run.output().stderr).toBe(
      'ERR_DEVNET_ANVIL_NOT_FOUND: anvil not found: anvilPath is "/nonexistent/anvil", which is not a file\n',
    );
    expect(run.output().stdout).toBe('');
  }, 20_000);

  it('lists its exit codes in --help', async () => {
    const run = runCli(['--help']);
    expect(await run.exited).toBe(0);
    expect(run.output().stdout).toMatch(/Exit codes: 0 .*1 .*2 bad arguments/s);
  }, 20_000);
});
