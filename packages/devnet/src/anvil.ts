import { type ChildProcess, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { DEVNET_ERROR_CODES, DevnetError } from './errors';

/**
 * The npm packages that ship anvil, by `${process.platform}-${process.arch}`. Each is an
 * optional dependency limited to its platform, so npm installs only the one that fits.
 */
export const ANVIL_PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/** The anvil package of linux x64, the platform CI runs on. */
export const ANVIL_PACKAGE = ANVIL_PACKAGES['linux-x64']!;

/** Environment variable naming an anvil binary, read when no `anvilPath` is given. */
export const ANVIL_PATH_ENV = 'ANVIL_PATH';

// Works from the ESM sources and from both the ESM and the CJS build.
const moduleRequire = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);

/** Require relative to this module (also used to find optional packages lazily). */
export function requireFromHere(): NodeJS.Require {
  return moduleRequire;
}

/** Where {@link resolveAnvilPath} looks; every field defaults to this process's own. */
export interface ResolveAnvilPathOptions {
  /** An anvil binary given explicitly (the `anvilPath` option, `--anvil`). */
  anvilPath?: string | undefined;
  /** Default `process.env` (`ANVIL_PATH`, `PATH`, `HOME`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Default `process.platform`. */
  platform?: string;
  /** Default `process.arch`. */
  arch?: string;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The binary inside the platform's anvil package, if that package is installed. */
function packagedAnvil(packageName: string, platform: string): string | undefined {
  let packageJson: string;
  try {
    packageJson = moduleRequire.resolve(`${packageName}/package.json`);
  } catch {
    return undefined;
  }
  const binary = join(dirname(packageJson), 'bin', platform === 'win32' ? 'anvil.exe' : 'anvil');
  return isFile(binary) ? binary : undefined;
}

/** An anvil on `PATH`, or where foundryup installs it (`~/.foundry/bin`). */
function installedAnvil(
  env: Readonly<Record<string, string | undefined>>,
  platform: string,
): string | undefined {
  const name = platform === 'win32' ? 'anvil.exe' : 'anvil';
  const separator = platform === 'win32' ? ';' : ':';
  const dirs = (env['PATH'] ?? '').split(separator).filter((dir) => dir !== '');
  const home = env['HOME'] ?? env['USERPROFILE'];
  if (home) dirs.push(join(home, '.foundry', 'bin'));
  return dirs.map((dir) => join(dir, name)).find(isFile);
}

/**
 * Finds the anvil binary to run, in this order: `anvilPath`; the `ANVIL_PATH` environment
 * variable; the anvil npm package of this platform (linux x64 and arm64, macOS x64 and arm64,
 * Windows x64); an `anvil` on `PATH` or in `~/.foundry/bin`.
 *
 * @throws DevnetError `ERR_DEVNET_ANVIL_NOT_FOUND` when a given path is not a file, or when no
 *   anvil is found for the platform (the message says how to install one and point at it).
 * @example
 * resolveAnvilPath({ env: { ANVIL_PATH: '/opt/foundry/bin/anvil' } }) // '/opt/foundry/bin/anvil'
 */
export function resolveAnvilPath(options: ResolveAnvilPathOptions = {}): string {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const given: Array<[string, string | undefined]> = [
    ['anvilPath', options.anvilPath],
    [ANVIL_PATH_ENV, env[ANVIL_PATH_ENV]],
  ];
  for (const [name, path] of given) {
    if (path === undefined || path === '') continue;
    if (!isFile(path)) {
      throw new DevnetError(
        DEVNET_ERROR_CODES.ANVIL_NOT_FOUND,
        `anvil not found: ${name} is ${JSON.stringify(path)}, which is not a file`,
      );
    }
    return path;
  }
  const packageName = ANVIL_PACKAGES[`${platform}-${arch}`];
  const found = (packageName && packagedAnvil(packageName, platform)) || installedAnvil(env, platform);
  if (found) return found;
  const packaged = packageName
    ? `its npm package ${packageName} is not installed (an optional dependency: npm install --include=optional)`
    : 'no npm package ships anvil for it';
  throw new DevnetError(
    DEVNET_ERROR_CODES.ANVIL_NOT_FOUND,
    `anvil not found for ${platform} ${arch}: ${packaged}, and no anvil is on PATH. Install Foundry ` +
      `(https://getfoundry.sh) and set ${ANVIL_PATH_ENV}=/path/to/anvil (tollbooth-devnet --anvil, ` +
      'startDevnet({ anvilPath })).',
  );
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
