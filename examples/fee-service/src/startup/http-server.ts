import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toOriginForm } from '@tollbooth/core/node';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../config';
import { createCors } from '../http/cors';
import { errorResult, requestIdOf } from '../http/respond';
import { paymentOutcomeOf, type ServiceMetrics } from '../metrics';
import type { CleanupStack } from './cleanup';
import type { PaidExchanges } from './paid-exchanges';

/** When a response's request arrived (performance.now(), ms). */
const STARTED = Symbol('fee-service.started');
type Timed = ServerResponse & { [STARTED]?: number };

/** What the finished-request listener reports to; set once the application is built. */
export interface RequestObservers {
  label(method: string, path: string): string;
  metrics: ServiceMetrics;
  /** What the gate's lifecycle hooks reported of each request. */
  exchanges: PaidExchanges;
  /**
   * `TollboothGate.isPaid`: asked only of a 429 or 405 the gate's hooks did not see (the rate limit
   * answers before the gate; a paid path's other methods match no route).
   */
  isPaid(method: string, target: string): boolean;
  /** The methods served at a path: a CORS preflight's `Access-Control-Allow-Methods`. */
  methodsOf?(path: string): readonly string[];
}

/** The service's own HTTP server: listening before the application exists, drained on shutdown. */
export interface ServiceHttpServer {
  server: Server;
  /** Where it listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** The canonical base URL (PUBLIC_BASE_URL, else `url`). */
  baseUrl: string;
  /** Hands requests to the mounted application (until then they answer 503 "starting"). */
  attach(dispatch: (req: IncomingMessage, res: ServerResponse) => void, observers: RequestObservers): void;
  /** Stops accepting and waits for in-flight requests (settlements) up to `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
}

async function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** Host headers known to be an authority: most requests carry one of a few, checked once. */
export const VALID_HOSTS_KEPT = 64;

/**
 * Whether a `Host` header is an authority URLs can be built from (RFC 9112 section 3.2); the
 * valid ones are kept (at most {@link VALID_HOSTS_KEPT}, oldest out first), an invalid one is
 * checked every time.
 */
export function createHostCheck(): { valid(host: string): boolean } {
  const known = new Set<string>();
  return {
    valid(host) {
      if (known.has(host)) return true;
      if (!URL.canParse(`http://${host}/`)) return false;
      if (known.size >= VALID_HOSTS_KEPT) known.delete(known.values().next().value as string);
      known.add(host);
      return true;
    },
  };
}

/**
 * Step 3: the `node:http` server, listening first because the canonical base URL may depend on
 * the port it got. One listener per response (no closure per request) counts the request and its
 * payment outcome and tracks the in-flight count for the graceful drain; the same on every
 * framework, since each mount only hands over its request listener.
 */
export async function startHttpServer(
  config: Pick<ServiceConfig, 'port' | 'host' | 'publicBaseUrl' | 'cors'>,
  cleanups: CleanupStack,
  logger: Logger,
): Promise<ServiceHttpServer> {
  let dispatch: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let observers: RequestObservers | undefined;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const cors = createCors(config.cors);
  const hosts = createHostCheck();

  function finished(this: Timed) {
    inFlight -= 1;
    if (inFlight === 0) drained?.();
    if (!observers) return;
    const req = this.req;
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const path = query >= 0 ? target.slice(0, query) : target;
    const method = req.method ?? 'GET';
    const route = observers.label(method, path);
    const seconds = (performance.now() - this[STARTED]!) / 1000;
    observers.metrics.observeRequest({ method, route, status: this.statusCode }, seconds);
    const exchange = observers.exchanges.of(this);
    if (exchange) {
      const outcome = paymentOutcomeOf(this.statusCode, exchange);
      observers.metrics.observePayment({ route, outcome });
    } else if (
      (this.statusCode === 429 || this.statusCode === 405) &&
      // The raw target, as the gate matches it (it decodes the path itself).
      observers.isPaid(method, target)
    ) {
      observers.metrics.observePayment({ route, outcome: paymentOutcomeOf(this.statusCode) });
    }
    if (this.statusCode === 429) {
      logger.info({ method, route, client: req.socket.remoteAddress }, 'rate limited (429)');
    } else if (logger.isLevelEnabled('debug'))
      logger.debug({ method, url: req.url, status: this.statusCode, ms: seconds * 1000 }, 'request');
  }

  const server = createServer((req, res) => {
    (res as Timed)[STARTED] = performance.now();
    inFlight += 1;
    res.on('close', finished);
    // An absolute-form target is origin-form before anything reads it (rate limit, edge, gate,
    // discovery), on every framework: the adapters would rewrite it only once the gate runs.
    toOriginForm(req);
    // Every answer a browser may read carries CORS, the 400s and 503s below included; a preflight
    // never reaches the frameworks (no rate limit, no challenge, no 404 or 405).
    cors.decorate(req, res);
    if (observers && cors.preflight(req, res, observers.methodsOf ?? (() => []))) return;
    if (!dispatch) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"starting"}');
      return;
    }
    // A Host that is no authority (`h:99999`, `a b`) would make every URL built from it throw:
    // refused here, 400 as RFC 9112 section 3.2 asks, the same on every mount.
    const host = req.headers.host;
    if (host !== undefined && !hosts.valid(host)) {
      const requestId = requestIdOf((name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      });
      const refusal = errorResult({
        status: 400,
        code: 'invalid_request',
        requestId,
        retryable: false,
        message: 'the Host header is not a valid authority',
      });
      const body = JSON.stringify(refusal.body);
      res
        .writeHead(400, {
          ...refusal.headers,
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
        })
        .end(body);
      return;
    }
    dispatch(req, res);
  });
  const address = await listen(server, config.port, config.host);
  const url = `http://${hostForUrl(config.host)}:${address.port}`;
  cleanups.push(
    'server',
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  return {
    server,
    url,
    baseUrl: config.publicBaseUrl ?? url,
    attach(handler, observe) {
      dispatch = handler;
      observers = observe;
    },
    async drain(timeoutMs) {
      // Stop accepting; idle keep-alive sockets go now, busy ones when their response ends.
      server.close();
      server.closeIdleConnections();
      if (inFlight === 0) return;
      logger.info({ inFlight }, 'waiting for in-flight requests (settlements) to finish');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        timer.unref();
        drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}
