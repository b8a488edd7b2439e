import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimulationModel } from './model';
import { isScenarioName, SCENARIO_NAMES, type ScenarioName } from './scenarios';
import { blockWithExtras, checkRawTransaction, esploraBlock, esploraTx } from './views';

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
  /** 429 (rate limited, with Retry-After) or 503 (`Service Unavailable`). */
  status: 429 | 503;
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

const FEE_PATHS = ['/api/v1/fees/', '/api/mempool', '/api/fee-estimates'];
const HEX64 = /^[0-9a-f]{64}$/;

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
  let errorFormat = options.broadcastErrorFormat ?? MEMPOOL_SIMULATOR_DEFAULTS.broadcastErrorFormat;
  const problems: string[] = [];
  if (!isScenarioName(scenario)) problems.push(`scenario must be one of ${SCENARIO_NAMES.join(', ')}`);
  if (!Number.isInteger(seed)) problems.push('seed must be an integer');
  if (!(timeScale >= 0)) problems.push('timeScale must be ≥ 0');
  if (problems.length > 0) throw new TypeError(`invalid simulator options: ${problems.join('; ')}`);

  const model = new SimulationModel({ seed, scenario });
  const faults: InjectedFault[] = [];
  const counts = new Map<string, number>();

  const broadcastErrorText = (code: number, message: string) =>
    errorFormat === 'json'
      ? `sendrawtransaction RPC error: ${JSON.stringify({ code, message })}`
      : `sendrawtransaction RPC error ${code}: ${message}`;

  function takeFault(path: string): InjectedFault | undefined {
    const index = faults.findIndex((f) => f.count > 0 && path.startsWith(f.pathPrefix ?? '/api'));
    if (index < 0) return undefined;
    const fault = faults[index]!;
    fault.count -= 1;
    if (fault.count === 0) faults.splice(index, 1);
    return fault;
  }

  async function handleRest(req: IncomingMessage, res: ServerResponse, path: string) {
    const fault = takeFault(path);
    if (fault?.status === 429) {
      return send(res, 429, 'Too Many Requests', { 'retry-after': String(fault.retryAfterSeconds ?? 0) });
    }
    if (fault?.status === 503) return send(res, 503, 'Service Unavailable');
    if (model.params.feesDown && FEE_PATHS.some((p) => path.startsWith(p))) {
      return send(res, 503, 'Service Unavailable');
    }
    const esplora = path.startsWith('/api/') ? path.slice(4) : path; // Esplora paths under /api
    if (req.method === 'POST' && esplora === '/tx') {
      const hex = await readBody(req);
      const check = checkRawTransaction(
        hex,
        model.spentOutpoints,
        (txid) => model.findTx(txid)?.block !== undefined,
      );
      if (!check.ok) return send(res, 400, broadcastErrorText(check.code, check.message));
      if (!model.findTx(check.txid)) {
        for (const outpoint of check.outpoints) model.spentOutpoints.add(outpoint);
        model.acceptTx(check.txid, check.vsize, check.weight, check.size);
      }
      return send(res, 200, check.txid);
    }
    if (req.method !== 'GET') return send(res, 404, 'Not Found');
    switch (path) {
      case '/api/v1/fees/recommended':
        return send(res, 200, model.recommendedFees(false));
      case '/api/v1/fees/precise':
        return send(res, 200, model.recommendedFees(true));
      case '/api/v1/fees/mempool-blocks':
        return send(res, 200, model.mempoolBlocks());
      case '/api/mempool':
        return send(res, 200, model.mempoolInfo());
      case '/api/fee-estimates':
        // deprecated on mempool.space, still served: 203 Non-Authoritative Information
        return send(res, 203, model.feeEstimates());
      case '/api/blocks/tip/height':
        return send(res, 200, String(model.tipHeight()));
      case '/api/blocks/tip/hash':
        return send(res, 200, model.tip().hash);
      case '/api/v1/blocks':
        return send(res, 200, recentBlocks(model.tipHeight()));
    }
    const blocksMatch = /^\/api\/v1\/blocks\/(\d+)$/.exec(path);
    if (blocksMatch) {
      const match = blocksMatch;
      const height = Number(match[1]);
      if (height > model.tipHeight()) return send(res, 400, { error: 'Block height is above the tip' });
      return send(res, 200, recentBlocks(height));
    }
    const blockMatch = /^\/api\/block\/([^/]+)$/.exec(path);
    if (blockMatch) {
      const match = blockMatch;
      const hash = match[1]!;
      if (!HEX64.test(hash)) return send(res, 400, 'Invalid hex string');
      const block = model.findBlock(hash);
      return block ? send(res, 200, esploraBlock(block)) : send(res, 404, 'Block not found');
    }
    const heightMatch = /^\/api\/block-height\/(\d+)$/.exec(path);
    if (heightMatch) {
      const match = heightMatch;
      const block = model.blockByHeight(Number(match[1]));
      return block ? send(res, 200, block.hash) : send(res, 404, 'Block not found');
    }
    const txMatch = /^\/api\/tx\/([^/]+)$/.exec(path);
    if (txMatch) {
      const match = txMatch;
      const txid = match[1]!;
      if (!HEX64.test(txid)) return send(res, 400, 'Invalid hex string');
      const found = model.findTx(txid);
      return found
        ? send(res, 200, esploraTx(txid, found.tx, found.block))
        : send(res, 404, 'Transaction not found');
    }
    return send(res, 404, 'Not Found');
  }

  function recentBlocks(height: number) {
    const out = [];
    for (let h = height; h > height - 15; h -= 1) {
      const block = model.blockByHeight(h);
      if (!block) break;
      out.push(blockWithExtras(block));
    }
    return out;
  }

  const btcPerKvb = (satPerVb: number) => Number((Math.round(satPerVb * 1000) / 1e8).toFixed(8));
  const rpcResult = (id: unknown, result: unknown) => ({ result, error: null, id });
  const rpcError = (id: unknown, code: number, message: string) => ({
    result: null,
    error: { code, message },
    id,
  });

  async function handleRpc(req: IncomingMessage, res: ServerResponse) {
    const expected = `Basic ${Buffer.from(`${rpcUser}:${rpcPassword}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="jsonrpc"' });
      return res.end();
    }
    let call: { id?: unknown; method?: unknown; params?: unknown };
    try {
      call = JSON.parse(await readBody(req)) as typeof call;
    } catch {
      return send(res, 500, rpcError(null, -32700, 'Parse error'));
    }
    const id = call.id ?? null;
    const params = Array.isArray(call.params) ? call.params : [];
    const method = String(call.method);
    const fail = (code: number, message: string, status = 500) =>
      send(res, status, rpcError(id, code, message));
    if (
      model.params.feesDown &&
      method !== 'getblockcount' &&
      method !== 'getbestblockhash' &&
      method !== 'getblockhash'
    ) {
      return fail(-28, 'Verifying blocks…');
    }
    switch (method) {
      case 'estimatesmartfee': {
        const target = Number(params[0]);
        const mode = params[1] === undefined ? 'economical' : String(params[1]).toLowerCase();
        if (!Number.isInteger(target) || target < 1)
          return fail(-8, 'Invalid conf_target, must be between 1 and 1008');
        if (mode !== 'economical' && mode !== 'conservative' && mode !== 'unset')
          return fail(
            -8,
            'Invalid estimate_mode parameter, must be one of: "unset", "economical", "conservative"',
          );
        const blocks = Math.min(1008, Math.max(2, target));
        // conservative looks at a shorter horizon, so it never quotes less than economical
        const horizon = mode === 'conservative' ? Math.max(1, Math.ceil(blocks / 2)) : blocks;
        const rate = Math.max(model.params.minRelayFee, model.estimateForTarget(horizon));
        return send(res, 200, rpcResult(id, { feerate: btcPerKvb(rate), blocks }));
      }
      case 'getmempoolinfo': {
        const info = model.mempoolInfo();
        return send(
          res,
          200,
          rpcResult(id, {
            loaded: true,
            size: info.count,
            bytes: info.vsize,
            usage: Math.round(info.vsize * 2.6),
            total_fee: Number((info.total_fee / 1e8).toFixed(8)),
            maxmempool: 300_000_000,
            mempoolminfee: btcPerKvb(model.params.minRelayFee),
            minrelaytxfee: btcPerKvb(model.params.minRelayFee),
            incrementalrelayfee: btcPerKvb(model.params.minRelayFee),
            unbroadcastcount: 0,
            fullrbf: true,
          }),
        );
      }
      case 'getblockcount':
        return send(res, 200, rpcResult(id, model.tipHeight()));
      case 'getbestblockhash':
        return send(res, 200, rpcResult(id, model.tip().hash));
      case 'getblockhash': {
        const block = model.blockByHeight(Number(params[0]));
        return block ? send(res, 200, rpcResult(id, block.hash)) : fail(-8, 'Block height out of range');
      }
      case 'getblockstats': {
        const ref = params[0];
        const block = typeof ref === 'number' ? model.blockByHeight(ref) : model.findBlock(String(ref));
        if (!block)
          return fail(
            typeof ref === 'number' ? -8 : -5,
            typeof ref === 'number' ? 'Target block height after current tip' : 'Block not found',
          );
        const r = block.feeRange;
        const int = (x: number | undefined) => Math.floor(x ?? 0);
        return send(
          res,
          200,
          rpcResult(id, {
            avgfee: block.txCount > 1 ? Math.floor(block.totalFees / (block.txCount - 1)) : 0,
            avgfeerate: block.avgFeeRate,
            blockhash: block.hash,
            feerate_percentiles: [int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5])],
            height: block.height,
            ins: block.txs.reduce((s, t) => s + t.inputs, 0),
            maxfeerate: int(r[6]),
            minfeerate: int(r[0]),
            outs: block.txs.reduce((s, t) => s + t.outputs, 0) + 2,
            subsidy: block.subsidy,
            time: Math.floor(block.timestampMs / 1000),
            total_size: block.size,
            total_weight: block.weight,
            totalfee: block.totalFees,
            txs: block.txCount,
          }),
        );
      }
      case 'getblocktemplate': {
        const projected = model.mempoolBlocks()[0];
        return send(
          res,
          200,
          rpcResult(id, {
            version: 0x20000000,
            previousblockhash: model.tip().hash,
            height: model.tipHeight() + 1,
            coinbasevalue: projected?.totalFees ?? 0,
            transactions: [],
            curtime: Math.floor(model.nowMs / 1000),
          }),
        );
      }
      case 'testmempoolaccept':
      case 'sendrawtransaction': {
        const hexes =
          method === 'testmempoolaccept' ? (Array.isArray(params[0]) ? params[0] : []) : [params[0]];
        const results = hexes.map((hex) =>
          checkRawTransaction(
            String(hex ?? ''),
            model.spentOutpoints,
            (txid) => model.findTx(txid)?.block !== undefined,
          ),
        );
        if (method === 'testmempoolaccept') {
          return send(
            res,
            200,
            rpcResult(
              id,
              results.map((r) =>
                r.ok
                  ? { txid: r.txid, allowed: true, vsize: r.vsize }
                  : { txid: '', allowed: false, 'reject-reason': r.message },
              ),
            ),
          );
        }
        const check = results[0]!;
        if (!check.ok) return fail(check.code, check.message);
        if (!model.findTx(check.txid)) {
          for (const outpoint of check.outpoints) model.spentOutpoints.add(outpoint);
          model.acceptTx(check.txid, check.vsize, check.weight, check.size);
        }
        return send(res, 200, rpcResult(id, check.txid));
      }
      default:
        return fail(-32601, 'Method not found', 404);
    }
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://simulator').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const handler =
      req.method === 'POST' && !path.startsWith('/api') ? handleRpc(req, res) : handleRest(req, res, path);
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
