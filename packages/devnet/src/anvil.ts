import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { DEVNET_ERROR_CODES, DevnetError } from './errors';

/** The npm package that ships the anvil binary (linux x64 only). */
export const ANVIL_PACKAGE = '@foundry-rs/anvil-linux-amd64';

// Works from the ESM sources and from both the ESM and the CJS build.
const moduleRequire = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);

/** Require relative to this module (also used to find optional packages lazily). */
export function requireFromHere(): NodeJS.Require {
  return moduleRequire;
}

/**
 * Finds the anvil binary inside {@link ANVIL_PACKAGE}.
 * @throws DevnetError `ERR_DEVNET_ANVIL_NOT_FOUND` when the package is not installed.
 */
export function resolveAnvilPath(): string {
  let packageJson: string;
  try {
    packageJson = moduleRequire.resolve(`${ANVIL_PACKAGE}/package.json`);
  } catch (cause) {
    throw new DevnetError(
      DEVNET_ERROR_CODES.ANVIL_NOT_FOUND,
      `anvil not found: the optional dependency ${ANVIL_PACKAGE} is not installed (it exists for linux x64 only; ` +
        `this is ${process.platform} ${process.arch}). Install foundry and pass its anvil with the anvilPath option.`,
      { cause },
    );
  }
  const binary = join(dirname(packageJson), 'bin', 'anvil');
  if (!existsSync(binary)) {
    throw new DevnetError(
      DEVNET_ERROR_CODES.ANVIL_NOT_FOUND,
      `anvil not found at ${binary} (${ANVIL_PACKAGE})`,
    );
  }
  return binary;
}

/** Asks the OS for a free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves whether 127.0.0.1:port can be bound right now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

// A devnet must never outlive the process that started it.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** A running anvil process. */
export interface AnvilProcess {
  readonly rpcUrl: string;
  readonly port: number;
  readonly pid: number | undefined;
  /** Stops anvil and resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link spawnAnvil}. */
export interface SpawnAnvilOptions {
  readonly chainId: number;
  readonly port: number;
  readonly accounts: number;
  readonly anvilPath: string;
  readonly startTimeoutMs: number;
}

async function answersChainId(rpcUrl: string): Promise<boolean> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    if (!response.ok) return false;
    const body = (await response.json()) as { result?: unknown };
    return typeof body.result === 'string';
  } catch {
    return false;
  }
}

/**
 * Spawns anvil on 127.0.0.1 and resolves once it answers `eth_chainId`.
 * @throws DevnetError `ERR_DEVNET_ANVIL_START_FAILED` (with anvil's stderr) when it exits or times out.
 */
export async function spawnAnvil(options: SpawnAnvilOptions): Promise<AnvilProcess> {
  const { chainId, port, accounts, anvilPath, startTimeoutMs } = options;
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--chain-id',
    String(chainId),
    '--accounts',
    String(accounts),
    '--silent',
  ];
  // Without this check a second anvil on a taken port would look healthy: the first one answers.
  if (!(await portIsFree(port))) {
    throw new DevnetError(
      DEVNET_ERROR_CODES.ANVIL_START_FAILED,
      `anvil cannot listen on 127.0.0.1:${port}: address already in use`,
    );
  }
  const child = spawn(anvilPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (stderr.length < 16_384) stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
    },
  );
  running.add(child);
  installExitHook();
  void exited.then(() => running.delete(child));

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };

  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + startTimeoutMs;
  let exitInfo: Awaited<typeof exited> | undefined;
  void exited.then((info) => {
    exitInfo = info;
  });
  while (Date.now() < deadline) {
    if (exitInfo) break;
    if (await answersChainId(rpcUrl)) return { rpcUrl, port, pid: child.pid, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stop();
  const reason = exitInfo?.error
    ? `could not be started (${exitInfo.error.message})`
    : exitInfo
      ? `exited with ${exitInfo.signal ?? `code ${exitInfo.code}`}`
      : `did not answer eth_chainId on ${rpcUrl} within ${startTimeoutMs} ms`;
  throw new DevnetError(
    DEVNET_ERROR_CODES.ANVIL_START_FAILED,
    `anvil (${anvilPath} ${args.join(' ')}) ${reason}${stderr.trim() ? `; stderr: ${stderr.trim()}` : ''}`,
  );
}
