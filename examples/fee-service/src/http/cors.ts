import type { IncomingMessage, ServerResponse } from 'node:http';
import { EXPOSED_PAYMENT_HEADERS } from '@tollbooth/core';
import type { ServiceRoute } from './types';

/**
 * CORS for browser clients on another origin, framework-neutral: the service's HTTP server runs it
 * before handing a request to Fastify, Express or Koa, so the three mounts answer alike
 * (docs/fee-service.md#browser-clients-cors). Payments travel in request headers, never cookies:
 * no credentials are ever allowed, and `*` is a sound default for a public pay-per-call API.
 */

/** `*` (any origin) or the exact origins allowed (`https://app.example.com`). */
export type CorsOrigins = '*' | readonly string[];

/** Request headers a browser may send: the payment and sign-in headers, a JSON body's type, a request id. */
export const CORS_ALLOWED_HEADERS =
  'PAYMENT-SIGNATURE, X-PAYMENT, SIGN-IN-WITH-X, Content-Type, X-Request-Id';

/**
 * Response headers a browser may read: the payment headers (the 402's challenge, the receipt), a
 * 429's or 503's `Retry-After`, the request id Error bodies repeat, and the txids a refusal names
 * (the broadcast's `X-Transaction-Id`, a replaced transaction's `X-Replaced-By`).
 */
export const CORS_EXPOSED_HEADERS = `${EXPOSED_PAYMENT_HEADERS}, Retry-After, X-Request-Id, RateLimit, RateLimit-Policy, X-Transaction-Id, X-Replaced-By`;

/** How long a browser may keep a preflight's answer, seconds (Chromium keeps at most 7,200). */
export const CORS_MAX_AGE_SECONDS = 600;

/** The CORS step of the service's HTTP server. */
export interface Cors {
  /**
   * Puts the CORS headers on a response before the application writes it: `Access-Control-Allow-Origin`
   * and `-Expose-Headers` (the gate merges its own into the latter), `Vary: Origin` with a list.
   */
  decorate(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Answers a preflight (`OPTIONS` with `Access-Control-Request-Method`) with 204 and the path's
   * methods; `false` for any other request. Call after {@link Cors.decorate}.
   */
  preflight(
    req: IncomingMessage,
    res: ServerResponse,
    methodsOf: (path: string) => readonly string[],
  ): boolean;
}

/**
 * Creates the CORS step for the allowed origins.
 * @param origins `*` (default of `CORS_ORIGINS`) or exact origins; an origin not listed gets no
 * `Access-Control-Allow-Origin` (the browser then withholds the answer from its page).
 * @example
 * const cors = createCors({ origins: ['https://app.example.com'] });
 * cors.decorate(req, res);
 * if (cors.preflight(req, res, () => ['GET', 'HEAD'])) return;
 */
export function createCors(options: { origins: CorsOrigins }): Cors {
  const any = options.origins === '*';
  const allowed = new Set(any ? [] : options.origins);
  return {
    decorate(req, res) {
      if (any) {
        res.setHeader('access-control-allow-origin', '*');
      } else {
        // The answer depends on Origin: a cache must not hand one origin's answer to another.
        res.setHeader('vary', 'Origin');
        const origin = req.headers.origin;
        if (origin === undefined || !allowed.has(origin)) return;
        res.setHeader('access-control-allow-origin', origin);
      }
      res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS);
    },
    preflight(req, res, methodsOf) {
      if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined)
        return false;
      // A preflight is never charged, challenged or routed: 204 whatever the path (an unknown
      // path lists no methods, so the browser does not send the request).
      const methods = methodsOf(pathOf(req.url ?? '/'));
      if (methods.length > 0) res.setHeader('access-control-allow-methods', methods.join(', '));
      res.setHeader('access-control-allow-headers', CORS_ALLOWED_HEADERS);
      res.setHeader('access-control-max-age', String(CORS_MAX_AGE_SECONDS));
      res.removeHeader('access-control-expose-headers');
      res.writeHead(204).end();
      return true;
    },
  };
}

function pathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end < 0 ? target : target.slice(0, end);
}

/**
 * The methods the service's routes serve at a path (`HEAD` with `GET`), in the routes' order; the
 * `Access-Control-Allow-Methods` of a preflight. Route paths are Express-style (`/block/:height`).
 * @example methodsOfRoutes(routes)('/api/v1/fees/now') // ['GET', 'HEAD']
 */
export function methodsOfRoutes(routes: readonly ServiceRoute[]): (path: string) => string[] {
  const byPath: Array<{ regex: RegExp; method: string }> = routes.map((route) => ({
    method: route.method,
    regex: new RegExp(
      `^${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`,
    ),
  }));
  return (path) => {
    const methods = new Set<string>();
    for (const { regex, method } of byPath) {
      if (!regex.test(path)) continue;
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
    return [...methods];
  };
}
