// Real processes for the charged ⇒ served fault tests and the soak: the standalone facilitator
// (`tollbooth-facilitator`) and the fee service (`npm start`) as child processes that can be
// SIGKILLed and restarted on the same port. Payments signed for the fee service's decision are in
// test/support/fault-payments.ts, the chain as the judge in test/support/fault-chain.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Devnet } from '@tollbooth/devnet';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(here, '..', '..');
const FACILITATOR_CLI = join(REPO_ROOT, 'packages', 'facilitator', 'src', 'cli.ts');
const FEE_SERVICE_MAIN = join(REPO_ROOT, 'examples', 'fee-service', 'src', 'main.ts');

export type Framework = 'fastify' | 'express' | 'koa';
export const FRAMEWORKS: readonly Framework[] = ['fastify', 'express', 'koa'];

/** A free loopback port chosen by the OS (kept for the restarts of one process). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A child process started by {@link Processes}. */
export interface Proc {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The URL it printed once ready. */
  readonly url: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote (stdout and stderr) so far. */
  output(): string;
  /** Sends SIGKILL and waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, SIGKILL after `graceMs`; waits for the exit. */
  stop(graceMs?: number): Promise<void>;
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Starts and tracks child processes; `killAll` (afterAll) kills each by its PID. */
export class Processes {
  private readonly all = new Set<Proc>();

  async start(
    name: string,
    args: string[],
    env: Record<string, string>,
    ready: RegExp,
    timeoutMs = 180_000,
  ): Promise<Proc> {
    const child = spawn(process.execPath, ['--conditions=tollbooth-source', '--import', 'tsx', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (alive(child)) child.kill('SIGKILL');
        reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${out}`));
      }, timeoutMs);
      let started = false;
      const onData = (chunk: Buffer) => {
        out += chunk.toString('utf8');
        // Searched only until it is ready (a long run's log is kept, not searched again).
        if (started) return;
        const match = ready.exec(out);
        if (match) {
          started = true;
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${out}`));
      });
    });
    const proc: Proc = {
      name,
      pid: child.pid!,
      child,
      url,
      exited,
      output: () => out,
      kill: async () => {
        if (alive(child)) process.kill(child.pid!, 'SIGKILL');
        await exited;
      },
      stop: async (graceMs = 5_000) => {
        if (!alive(child)) return;
        process.kill(child.pid!, 'SIGTERM');
        const timer = setTimeout(() => {
          if (alive(child)) process.kill(child.pid!, 'SIGKILL');
        }, graceMs);
        await exited;
        clearTimeout(timer);
      },
    };
    this.all.add(proc);
    void exited.then(() => this.all.delete(proc));
    return proc;
  }

  async killAll(): Promise<void> {
    await Promise.all([...this.all].map((proc) => proc.kill()));
  }
}

/** The standalone facilitator (`tollbooth-facilitator`) settling on the devnet, on `port` (0: any). */
export function startFacilitatorProcess(procs: Processes, devnet: Devnet, port = 0): Promise<Proc> {
  return procs.start(
    'tollbooth-facilitator',
    [
      FACILITATOR_CLI,
      '--rpc-url',
      devnet.rpcUrl,
      '--chain-id',
      String(devnet.chainId),
      '--port',
      String(port),
    ],
    { TOLLBOOTH_FACILITATOR_KEY: devnet.accounts.facilitator.privateKey },
    /tollbooth-facilitator: (http:\/\/[^\s]+) /,
  );
}

export interface FeeServiceProcessOptions {
  framework: Framework;
  ledgerUrl: string;
  /** The fault proxy's URL. */
  facilitatorUrl: string;
  /** Fixed, so that a restarted process serves the same resource URLs. */
  port: number;
  /** Settle timeout of the facilitator client, ms. */
  settleTimeoutMs?: number;
  env?: Record<string, string>;
}

/**
 * The fee service (`examples/fee-service/src/main.ts`, what `npm start` runs) in the production
 * shape: an external facilitator by URL, a chain reader by RPC_URL, the ledger by LEDGER_URL.
 * Rate limits and the observatory are off (they are not what is under test).
 */
export function startFeeServiceProcess(
  procs: Processes,
  devnet: Devnet,
  options: FeeServiceProcessOptions,
): Promise<Proc> {
  return procs.start(
    `fee-service (${options.framework})`,
    [FEE_SERVICE_MAIN],
    {
      PORT: String(options.port),
      HOST: '127.0.0.1',
      FRAMEWORK: options.framework,
      PROFILE: 'local',
      FACILITATOR_URL: options.facilitatorUrl,
      FACILITATOR_TIMEOUT_MS: '5000',
      FACILITATOR_SETTLE_TIMEOUT_MS: String(options.settleTimeoutMs ?? 5_000),
      RPC_URL: devnet.rpcUrl,
      PAY_TO: devnet.accounts.payTo.address,
      NETWORK: `eip155:${devnet.chainId}`,
      ASSET: devnet.token.address,
      ASSET_NAME: devnet.token.name,
      ASSET_VERSION: devnet.token.version,
      LEDGER_URL: options.ledgerUrl,
      RATE_LIMIT_ENABLED: 'false',
      OBSERVATORY_ENABLED: 'false',
      SIMULATOR_HISTORY_HOURS: '0',
      SHUTDOWN_TIMEOUT_MS: '2000',
      // info: the `fee service listening` JSON line (the only ready signal off a terminal).
      LOG_LEVEL: 'info',
      ...options.env,
    },
    /^(?=.*"msg":"fee service listening").*"url":"(http:\/\/[^"]+)"/m,
  );
}
