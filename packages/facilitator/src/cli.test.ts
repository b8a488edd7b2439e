import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkChainRpc } from './check-chain-rpc';

const cli = join(dirname(fileURLToPath(import.meta.url)), 'cli.ts');

interface Run {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): { stdout: string; stderr: string };
}

function runCli(args: string[], key: string): Run {
  const child = spawn(process.execPath, ['--conditions=tollbooth-source', '--import', 'tsx', cli, ...args], {
    env: { ...process.env, TOLLBOOTH_FACILITATOR_KEY: key },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
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

/** The URL the facilitator prints once it listens. */
async function listeningUrl(run: Run): Promise<string> {
  return (await printed(run.child, /tollbooth-facilitator: (http:\/\/\S+)/))[1]!;
}

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let devnet: Devnet;
const runs: Run[] = [];
beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 0 });
});
afterAll(async () => {
  for (const run of runs) if (run.child.exitCode === null) run.child.kill('SIGKILL');
  await devnet?.stop();
});

describe('tollbooth-facilitator', { concurrent: true, timeout: 60_000 }, () => {
  it('refuses to start, exit 1, when the RPC does not answer', async () => {
    const port = await closedPort();
    const run = runCli(
      ['--rpc-url', `http://127.0.0.1:${port}`, '--chain-id', '8453', '--port', '0'],
      devnet.accounts.facilitator.privateKey,
    );
    runs.push(run);
    expect(await run.exited).toBe(1);
    expect(run.output().stderr).toMatch(
      new RegExp(
        `^tollbooth-facilitator: cannot start: the RPC at http://127\\.0\\.0\\.1:${port} does not answer \\(.+\\)\\n$`,
      ),
    );
    expect(run.output().stdout).toBe('');
  });

  it('starts against a live RPC, serves /supported and stops on SIGTERM', async () => {
    const run = runCli(
      ['--rpc-url', devnet.rpcUrl, '--chain-id', '8453', '--port', '0'],
      devnet.accounts.facilitator.privateKey,
    );
    runs.push(run);
    const url = await listeningUrl(run);
    const supported = (await (await fetch(`${url}/supported`)).json()) as { kinds: unknown[] };
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ scheme: 'exact', network: 'eip155:8453' }),
    );
    expect(run.output().stderr).toBe('');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('lists its exit codes in --help', async () => {
    const run = runCli(['--help'], '');
    runs.push(run);
    expect(await run.exited).toBe(0);
    expect(run.output().stdout).toMatch(
      /Exit codes: 0 stopped by SIGINT or SIGTERM, 1 could not start .*2 bad arguments\./s,
    );
  });
});

describe('checkChainRpc', () => {
  const facilitator = () => privateKeyToAccount(devnet.accounts.facilitator.privateKey).address;

  it('finds nothing wrong with a live RPC of the configured chain and a funded account', async () => {
    expect(await checkChainRpc({ rpcUrl: devnet.rpcUrl, chainId: 8453, address: facilitator() })).toEqual({
      warnings: [],
    });
  });

  it('names an RPC that serves another chain', async () => {
    expect(await checkChainRpc({ rpcUrl: devnet.rpcUrl, chainId: 84532, address: facilitator() })).toEqual({
      problem: `the RPC at ${devnet.rpcUrl} serves chain 8453, not the configured chain 84532`,
      warnings: [],
    });
  });

  it('warns about a settling account without gas', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    expect(await checkChainRpc({ rpcUrl: devnet.rpcUrl, chainId: 8453, address })).toEqual({
      warnings: [
        `the settling account ${address} holds no gas (0 ETH): every settlement will fail until it is funded`,
      ],
    });
  });
});
