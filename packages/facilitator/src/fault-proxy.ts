import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FacilitatorOperation } from '@tollbooth/core';
import {
  type FacilitatorFaultMode,
  type FacilitatorFaultSetting,
  operationOf,
  toFaultSetting,
} from './fault-modes';
import { parseJson, refusal, saidFailed, send } from './fault-proxy-answers';

export interface FacilitatorFaultProxyOptions {
  /** Base URL of the facilitator behind the proxy, e.g. `http://127.0.0.1:4021`. */
  target: string;
  /** Starting mode. Default `pass`. */
  mode?: FacilitatorFaultMode | FacilitatorFaultSetting;
  /** How long `slow-supported` delays `/supported`, ms. Default 5 000. */
  slowSupportedMs?: number;
  /**
   * A fixed network delay each way, ms, in every mode: a request waits this long before the proxy
   * acts on it, an answer this long before it is sent (a hosted facilitator's distance). Default 0.
   */
  delayMs?: number;
  /**
   * Path of the control endpoint (`GET` reads the mode and counters, `PUT` / `POST` with
   * `{mode, operations?}` sets the mode), so a proxy in another process can be driven over HTTP.
   * `false` turns it off. Default `/__fault`.
   */
  controlPath?: string | false;
  /** Port to listen on. Default: a free one. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
}

/** Defaults of {@link FacilitatorFaultProxyOptions}. */
export const FACILITATOR_FAULT_PROXY_DEFAULTS = Object.freeze({
  mode: 'pass' as FacilitatorFaultMode,
  slowSupportedMs: 5_000,
  delayMs: 0,
  controlPath: '/__fault',
  host: '127.0.0.1',
});

type Counts = Record<FacilitatorOperation | 'other', number>;

/** What a proxy has seen since it started. */
export interface FacilitatorFaultProxyStats {
  mode: FacilitatorFaultMode;
  operations: FacilitatorOperation[];
  /** Requests that reached the proxy, by operation. */
  received: Counts;
  /** Requests forwarded to the facilitator, by operation (a held `frozen` request counts once released). */
  forwarded: Counts;
  /** Requests whose answer was changed, dropped or held by a fault, by operation. */
  faulted: Counts;
  /** Requests held right now (`verify-timeout`, `settle-answer-hung`, `frozen`). */
  held: number;
}

export interface FacilitatorFaultProxy {
  /** Base URL to give the gate instead of the facilitator's. */
  readonly url: string;
  readonly target: string;
  readonly mode: FacilitatorFaultMode;
  /**
   * Switches the fault (setting the mode it is in changes only its operations). Requests held by `frozen` are forwarded when it ends (their answers go
   * back if their callers still wait); answers held by `settle-answer-hung` and `verify-timeout`
   * are dropped (connection reset).
   */
  setMode(mode: FacilitatorFaultMode | FacilitatorFaultSetting): void;
  stats(): FacilitatorFaultProxyStats;
  /** Resolves once `count` requests of `operation` have reached the proxy in all (not only new ones). */
  waitForReceived(operation: FacilitatorOperation, count: number, timeoutMs?: number): Promise<void>;
  /** Stops listening; held requests are reset, as if the process had died. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;
const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'authorization'];

function zeroCounts(): Counts {
  return { verify: 0, settle: 0, supported: 0, other: 0 };
}

interface Held {
  res: ServerResponse;
  /** Forwards the request (frozen) or drops it (the others). */
  release: (forward: boolean) => void;
}

/**
 * A facilitator behind a switchable fault: an HTTP proxy in front of any facilitator (the
 * standalone `tollbooth-facilitator`, a hosted one) that plays the failures a payment gate must
 * survive: lost and hung settle answers after the transfer landed, a 500 after the transfer, a
 * success whose transaction never mines, timeouts, garbage, resets, and a freeze. The mode
 * changes at run time, in process (`setMode`) or over HTTP (the control endpoint), and the
 * proxy counts what reached it and what it forwarded, so a test can tell whether a retry
 * reached the facilitator again.
 *
 * @example
 * const proxy = await startFacilitatorFaultProxy({ target: facilitator.url });
 * const gateFacilitator = createHttpFacilitatorClient({ url: proxy.url, settleTimeoutMs: 2_000 });
 * proxy.setMode('settle-answer-dropped'); // the next settlement lands on chain, its answer is lost
 */
export async function startFacilitatorFaultProxy(
  options: FacilitatorFaultProxyOptions,
): Promise<FacilitatorFaultProxy> {
  const problems: string[] = [];
  let target = '';
  try {
    const parsed = new URL(options.target);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') problems.push('target must be http(s)');
    target = options.target.replace(/\/+$/, '');
  } catch {
    problems.push(`target ${JSON.stringify(options.target)} is not a URL`);
  }
  let setting: Required<FacilitatorFaultSetting> = { mode: 'pass', operations: [] };
  try {
    setting = toFaultSetting(options.mode ?? FACILITATOR_FAULT_PROXY_DEFAULTS.mode);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const slowSupportedMs = options.slowSupportedMs ?? FACILITATOR_FAULT_PROXY_DEFAULTS.slowSupportedMs;
  if (!Number.isFinite(slowSupportedMs) || slowSupportedMs < 0)
    problems.push('slowSupportedMs must be a non-negative number');
  const delayMs = options.delayMs ?? FACILITATOR_FAULT_PROXY_DEFAULTS.delayMs;
  if (!Number.isFinite(delayMs) || delayMs < 0) problems.push('delayMs must be a non-negative number');
  const controlPath =
    options.controlPath === undefined ? FACILITATOR_FAULT_PROXY_DEFAULTS.controlPath : options.controlPath;
  if (controlPath !== false && !controlPath.startsWith('/')) problems.push('controlPath must start with /');
  if (problems.length > 0) throw new TypeError(`invalid fault proxy options: ${problems.join('; ')}`);

  const received = zeroCounts();
  const forwarded = zeroCounts();
  const faulted = zeroCounts();
  const held = new Set<Held>();
  const waiters = new Set<() => void>();

  const applies = (operation: FacilitatorOperation | 'other') =>
    operation !== 'other' && (setting.operations as readonly string[]).includes(operation);

  const setMode = (value: FacilitatorFaultMode | FacilitatorFaultSetting) => {
    const next = toFaultSetting(value);
    const changed = next.mode !== setting.mode;
    setting = next;
    if (!changed) return;
    // Leaving a hold: a frozen request resumes (forwarded); a held answer is lost.
    for (const entry of [...held]) {
      held.delete(entry);
      entry.release(true);
    }
  };

  const stats = (): FacilitatorFaultProxyStats => ({
    mode: setting.mode,
    operations: [...setting.operations],
    received: { ...received },
    forwarded: { ...forwarded },
    faulted: { ...faulted },
    held: held.size,
  });

  async function forward(
    req: IncomingMessage,
    path: string,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const response = await fetch(`${target}${path}`, {
      method: req.method ?? 'GET',
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? null : body,
    });
    const answer = Buffer.from(await response.arrayBuffer());
    const type = response.headers.get('content-type');
    return { status: response.status, headers: type ? { 'content-type': type } : {}, body: answer };
  }

  function hold(res: ServerResponse, onRelease: (forward: boolean) => void): void {
    const entry: Held = {
      res,
      release: (forwardIt) => {
        if (res.destroyed) return;
        onRelease(forwardIt);
      },
    };
    held.add(entry);
    res.once('close', () => held.delete(entry));
  }

  const reset = (res: ServerResponse) => res.socket?.destroy();

  function reply(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: Buffer | string,
  ) {
    if (delayMs > 0) {
      const timer = setTimeout(() => send(res, status, headers, body), delayMs);
      res.once('close', () => clearTimeout(timer));
    } else send(res, status, headers, body);
  }

  async function pass(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
    op: keyof Counts,
  ) {
    forwarded[op] += 1;
    try {
      const answer = await forward(req, path, body);
      reply(res, answer.status, answer.headers, answer.body);
    } catch (error) {
      // The facilitator is down: a gateway's answer, so the caller sees it as a failed call.
      reply(res, 502, { 'content-type': 'application/json' }, JSON.stringify({ error: String(error) }));
    }
  }

  async function control(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    if (req.method === 'GET') {
      reply(res, 200, { 'content-type': 'application/json' }, JSON.stringify(stats()));
      return;
    }
    if (req.method === 'PUT' || req.method === 'POST') {
      try {
        setMode(toFaultSetting(JSON.parse(body.toString('utf8'))));
      } catch (error) {
        const message = error instanceof SyntaxError ? 'body is not JSON' : (error as Error).message;
        reply(res, 400, { 'content-type': 'application/json' }, JSON.stringify({ error: message }));
        return;
      }
      reply(res, 200, { 'content-type': 'application/json' }, JSON.stringify(stats()));
      return;
    }
    reply(res, 405, { allow: 'GET, PUT, POST' }, '');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy.invalid');
    const path = `${url.pathname}${url.search}`;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reply(res, 413, {}, '');
        return;
      }
      chunks.push(chunk);
    }
    const body = Buffer.concat(chunks);
    if (controlPath !== false && url.pathname === controlPath) return control(req, res, body);

    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const op = operationOf(url.pathname);
    received[op] += 1;
    for (const wake of [...waiters]) wake();
    if (!applies(op)) return pass(req, res, path, body, op);
    faulted[op] += 1;

    switch (setting.mode) {
      case 'frozen':
        hold(res, (resume) => (resume ? void pass(req, res, path, body, op) : reset(res)));
        return;
      case 'verify-timeout':
        hold(res, () => reset(res));
        return;
      case 'connection-reset':
        reset(res);
        return;
      case 'garbage-json':
        reply(res, 200, { 'content-type': 'application/json' }, '{"success": tr');
        return;
      case 'slow-supported': {
        const timer = setTimeout(() => void pass(req, res, path, body, op), slowSupportedMs);
        res.once('close', () => clearTimeout(timer));
        return;
      }
      case 'settle-unmined-hash': {
        const request = parseJson(body) as {
          paymentPayload?: { payload?: { authorization?: { from?: unknown } } };
          paymentRequirements?: { network?: unknown };
        };
        const answer = {
          success: true,
          transaction: `0x${randomBytes(32).toString('hex')}`,
          network: String(request?.paymentRequirements?.network ?? ''),
          payer: String(request?.paymentPayload?.payload?.authorization?.from ?? ''),
        };
        reply(res, 200, { 'content-type': 'application/json' }, JSON.stringify(answer));
        return;
      }
      case 'settle-refused':
        reply(res, 200, { 'content-type': 'application/json' }, JSON.stringify(refusal(body)));
        return;
      default: {
        // The settle variants: the facilitator settles for real, then its answer is spoiled.
        const mode = setting.mode;
        forwarded[op] += 1;
        let answer: Awaited<ReturnType<typeof forward>> | undefined;
        try {
          answer = await forward(req, path, body);
        } catch {
          answer = undefined;
        }
        if (mode === 'settle-answer-dropped' || answer === undefined) reset(res);
        else if (mode === 'settle-500-after-transfer')
          reply(res, 500, { 'content-type': 'application/json' }, '{"error":"internal error"}');
        else if (mode === 'settle-failed-after-transfer' || mode === 'settle-failed-400-after-transfer') {
          const status = mode === 'settle-failed-after-transfer' ? 200 : 400;
          reply(res, status, { 'content-type': 'application/json' }, JSON.stringify(saidFailed(body)));
        } else hold(res, () => reset(res));
      }
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => reset(res));
  });
  const host = options.host ?? FACILITATOR_FAULT_PROXY_DEFAULTS.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    target,
    get mode() {
      return setting.mode;
    },
    setMode,
    stats,
    waitForReceived(operation, count, timeoutMs = 30_000) {
      if (received[operation] >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${count} ${operation} requests did not arrive in ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (received[operation] < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const entry of held) reset(entry.res);
        held.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
