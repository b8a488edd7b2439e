import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimulationModel } from './model';
import { type BroadcastErrorFormat, handleRest } from './rest-dialect';
import { handleRpc } from './rpc-dialect';
import { isScenarioName, SCENARIO_NAMES, type ScenarioName } from './scenarios';

export interface MempoolSimulatorOptions {
  /** Starting scenario. Default `calm`. */
  scenario?: ScenarioName;
  /** Seed of every random draw. Default 42. */
  seed?: number;
  /** Port; 0 picks a free one. Default 0. */
  port?: number;
  /** Loopback host. Default 127.0.0.1. */
  host?: string;
  /**
   * Simulated milliseconds per real millisecond. 0 (default) freezes time: it moves only through
   * `advance(ms)`, which keeps answers deterministic. 60 runs an hour a minute.
   */
  timeScale?: number;
  /** Simulated time at the start, ms since the epoch. Default 2026-08-06T12:00:00Z. */
  startMs?: number;
  /** Core RPC basic-auth user. Default `tollbooth`. */
  rpcUser?: string;
  /** Core RPC basic-auth password. Default `simulator`. */
  rpcPassword?: string;
  /** Broadcast error text form on the REST dialects: `json` (`RPC error: {...}`) or `code` (`RPC error -26: ...`). Default json. */
  broadcastErrorFormat?: 'json' | 'code';
}

export const MEMPOOL_SIMULATOR_DEFAULTS = {
  scenario: 'calm',
  seed: 42,
  port: 0,
  host: '127.0.0.1',
  timeScale: 0,
  rpcUser: 'tollbooth',
  rpcPassword: 'simulator',
  broadcastErrorFormat: 'json',
} as const;

/** A fault to inject into the next matching requests (tests and demos). */
export interface InjectedFault {
  /**
   * 429 (rate limited, with Retry-After) or 503 (`Service Unavailable`) on the REST dialects;
   * `warmup` makes the next Core RPC calls answer -28 `Loading block index…`.
   */
  status: 429 | 503 | 'warmup';
  /** How many requests fail. */
  count: number;
  /** Only requests whose path starts with this. Default every REST path. */
  pathPrefix?: string;
  /** Retry-After seconds sent with a 429. Default 0. */
  retryAfterSeconds?: number;
}

export interface MempoolSimulator {
  /** mempool.space dialect base URL (without `/api`). */
  url: string;
  /** Esplora dialect base URL (`url` + `/api`; `/fee-estimates` answers 203 there, as on mempool.space). */
  esploraUrl: string;
  /** Core JSON-RPC URL with basic-auth credentials. */
  coreRpcUrl: string;
  rpcUser: string;
  rpcPassword: string;
  /** The simulation behind the server (read-only use). */
  model: SimulationModel;
  /** Moves simulated time forward by `ms`. */
  advance(ms: number): void;
  /** Mines a block now. */
  mineBlock(): void;
  /** Switches scenario; the chain and mempool carry on. */
  setScenario(name: ScenarioName): void;
  /** Makes the next matching requests fail with a 429 or 503. */
  injectFault(fault: InjectedFault): void;
  setBroadcastErrorFormat(format: 'json' | 'code'): void;
  /** Number of requests served, per path (diagnostics). */
  requestCount(path?: string): number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const isText = typeof body === 'string';
  res.writeHead(status, {
    'content-type': isText ? 'text/plain' : 'application/json',
    ...headers,
  });
  res.end(isText ? body : JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4_000_000) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Starts the deterministic mempool simulator on loopback, serving the mempool.space REST,
 * Esplora and Bitcoin Core JSON-RPC dialects with their quirks.
 * @example
 * const sim = await startMempoolSimulator({ scenario: 'backlog', seed: 7 });
 * const fees = await (await fetch(`${sim.url}/api/v1/fees/recommended`)).json();
 * await sim.close();
 */
export async function startMempoolSimulator(
  options: MempoolSimulatorOptions = {},
): Promise<MempoolSimulator> {
  const scenario = options.scenario ?? MEMPOOL_SIMULATOR_DEFAULTS.scenario;
  const seed = options.seed ?? MEMPOOL_SIMULATOR_DEFAULTS.seed;
  const timeScale = options.timeScale ?? MEMPOOL_SIMULATOR_DEFAULTS.timeScale;
  const host = options.host ?? MEMPOOL_SIMULATOR_DEFAULTS.host;
  const rpcUser = options.rpcUser ?? MEMPOOL_SIMULATOR_DEFAULTS.rpcUser;
  const rpcPassword = options.rpcPassword ?? MEMPOOL_SIMULATOR_DEFAULTS.rpcPassword;
  let errorFormat: BroadcastErrorFormat =
    options.broadcastErrorFormat ?? MEMPOOL_SIMULATOR_DEFAULTS.broadcastErrorFormat;
  const problems: string[] = [];
  if (!isScenarioName(scenario)) problems.push(`scenario must be one of ${SCENARIO_NAMES.join(', ')}`);
  if (!Number.isInteger(seed)) problems.push('seed must be an integer');
  if (!(timeScale >= 0)) problems.push('timeScale must be ≥ 0');
  if (problems.length > 0) throw new TypeError(`invalid simulator options: ${problems.join('; ')}`);

  const model = new SimulationModel({
    seed,
    scenario,
    ...(options.startMs === undefined ? {} : { startMs: options.startMs }),
  });
  const faults: InjectedFault[] = [];
  const counts = new Map<string, number>();

  function takeFault(path: string): InjectedFault | undefined {
    const index = faults.findIndex(
      (f) => f.count > 0 && f.status !== 'warmup' && path.startsWith(f.pathPrefix ?? '/api'),
    );
    if (index < 0) return undefined;
    const fault = faults[index]!;
    fault.count -= 1;
    if (fault.count === 0) faults.splice(index, 1);
    return fault;
  }
  const takeWarmup = () => {
    const index = faults.findIndex((f) => f.count > 0 && f.status === 'warmup');
    if (index < 0) return false;
    faults[index]!.count -= 1;
    if (faults[index]!.count === 0) faults.splice(index, 1);
    return true;
  };
  const rest = { model, send, readBody, errorFormat: () => errorFormat };

  async function handleRestWithFaults(req: IncomingMessage, res: ServerResponse, path: string) {
    const fault = takeFault(path);
    if (fault?.status === 429) {
      return send(res, 429, 'Too Many Requests', { 'retry-after': String(fault.retryAfterSeconds ?? 0) });
    }
    if (fault?.status === 503) return send(res, 503, 'Service Unavailable');
    return handleRest(rest, req, res, path);
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://simulator').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const handler =
      req.method === 'POST' && !path.startsWith('/api')
        ? handleRpc({ model, send, takeWarmup }, req, res, { user: rpcUser, password: rpcPassword }, () =>
            readBody(req),
          )
        : handleRestWithFaults(req, res, path);
    handler.catch(() => {
      if (!res.headersSent) send(res, 500, 'Internal Server Error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? MEMPOOL_SIMULATOR_DEFAULTS.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host}:${port}`;

  let ticker: NodeJS.Timeout | undefined;
  if (timeScale > 0) {
    let last = performance.now();
    ticker = setInterval(() => {
      const now = performance.now();
      model.advance((now - last) * timeScale);
      last = now;
    }, 250);
    ticker.unref();
  }

  return {
    url,
    esploraUrl: `${url}/api`,
    coreRpcUrl: `http://${encodeURIComponent(rpcUser)}:${encodeURIComponent(rpcPassword)}@${host}:${port}/`,
    rpcUser,
    rpcPassword,
    model,
    advance: (ms) => model.advance(ms),
    mineBlock: () => {
      model.mineBlock();
    },
    setScenario(name) {
      if (!isScenarioName(name)) throw new TypeError(`unknown scenario ${String(name)}`);
      model.setScenario(name);
    },
    injectFault(fault) {
      faults.push({ ...fault });
    },
    setBroadcastErrorFormat(format) {
      errorFormat = format;
    },
    requestCount: (path) =>
      path === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : (counts.get(path) ?? 0),
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (ticker) clearInterval(ticker);
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
