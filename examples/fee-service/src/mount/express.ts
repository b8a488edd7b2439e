import { tollbooth } from '@tollbooth/express';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { type RateLimitInfo, rateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { parsedInputOf, readRequestBody } from '../http/body';
import { errorResult, requestIdOf } from '../http/respond';
import type { EdgeRequest, RouteResult } from '../http/types';
import {
  appendRateLimitFields,
  encodeResult,
  internalError,
  notFound,
  type RateLimitStanding,
  retryAfterSeconds,
} from './shared';
import type { MountedApp, MountOptions, RateLimitSettings } from './types';

function send(res: Response, result: RouteResult): void {
  const { status, headers, body } = encodeResult(result);
  res.status(status).set(headers);
  if (body === undefined) res.end();
  else res.end(body);
}

const EDGE = Symbol('fee-service.edgeRequest');
type Resolved = Request & { [EDGE]?: EdgeRequest };

/** The request the limits judge (a tools/call's tool, once `resolveEdge` read it), else the request's own. */
const edgeRequest = (req: Request): EdgeRequest =>
  (req as Resolved)[EDGE] ?? { method: req.method, target: req.originalUrl };

/** One limit: counted by express-rate-limit, answered with the IETF fields every mount writes. */
function limiter(
  limits: RateLimitSettings,
  name: string,
  max: number,
  windowMs: number,
  skip: (req: Request) => boolean,
): [RequestHandler, RequestHandler] {
  const redis = limits.redis;
  const property = `rateLimit:${name}`;
  const standing = (req: Request): RateLimitStanding | undefined => {
    const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[property];
    if (!info) return undefined;
    const resetSeconds = info.resetTime
      ? Math.max(0, (info.resetTime.getTime() - Date.now()) / 1000)
      : windowMs / 1000;
    return { name, limit: info.limit, windowMs, remaining: info.remaining, resetSeconds };
  };
  const fields = (req: Request, res: Response) => {
    const now = standing(req);
    if (now) appendRateLimitFields({ get: (h) => res.getHeader(h), set: (h, v) => res.setHeader(h, v) }, now);
    return now;
  };
  const count = rateLimit({
    windowMs,
    limit: max,
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: property,
    skip,
    // The 429 has no body (docs/fee-service-contract.md#errors).
    handler: (req, res) => {
      const now = fields(req, res);
      res
        .status(429)
        .set(
          'retry-after',
          now ? String(Math.max(1, Math.ceil(now.resetSeconds))) : retryAfterSeconds(windowMs),
        )
        .end();
    },
    ...(redis
      ? {
          store: new RedisStore({
            prefix: `${limits.prefix ?? 'fee-service:rl:'}express:${name}:`,
            sendCommand: (command: string, ...args: string[]) =>
              redis.call(command, ...args) as Promise<number>,
          }),
        }
      : {}),
  });
  // A request the limit skipped has no standing under its name: nothing is written.
  const answer: RequestHandler = (req, res, next) => {
    fields(req, res);
    next();
  };
  return [count, answer];
}

/**
 * Mounts the fee service on Express 5: express-rate-limit → tollbooth() (with each paid route's
 * precondition) → routes.
 */
export async function mountExpress(options: MountOptions): Promise<MountedApp> {
  const { edge, rateLimit: limits } = options;
  const app = express();
  app.disable('x-powered-by');
  if (options.trustProxy) app.set('trust proxy', true);

  if (limits.enabled || options.ownLimits?.some((own) => own.always)) {
    // A tools/call POSTed to /mcp counts as its tool: the body is read for it (and kept).
    app.use((req, _res, next) => {
      const resolved = edge.resolve(edgeRequest(req), () => readRequestBody(req));
      if (!(resolved instanceof Promise)) return next();
      resolved.then((request) => {
        (req as Resolved)[EDGE] = request;
        next();
      }, next);
    });
  }
  if (limits.enabled) {
    app.use(...limiter(limits, 'paid', limits.max, limits.windowMs, (req) => !edge.isPaid(edgeRequest(req))));
  }
  for (const own of options.ownLimits ?? []) {
    // A resource's own limit applies with the edge limit, or always when it says so (the demo's).
    if (!limits.enabled && !own.always) continue;
    app.use(
      ...limiter(
        limits,
        own.name,
        own.max,
        own.windowMs,
        (req) => edge.ownLimit(edgeRequest(req)) !== own.name,
      ),
    );
  }
  app.use(tollbooth({ gate: options.gate }));

  for (const route of options.routes) {
    const register = route.method === 'GET' ? app.get.bind(app) : app.post.bind(app);
    register(route.path, async (req: Request, res: Response, next: NextFunction) => {
      try {
        const header = (name: string) => req.get(name);
        const result = await route.handler({
          method: req.method,
          target: req.originalUrl,
          url: new URL(`${req.protocol}://${req.host}${req.originalUrl}`),
          params: { ...(req.params as Record<string, string>) },
          header,
          requestId: req.payment?.requestId ?? requestIdOf(header),
          payment: req.payment,
          readBody: () => readRequestBody(req),
          parsedInput: () => parsedInputOf(req),
        });
        send(res, result);
      } catch (error) {
        next(error);
      }
    });
  }
  app.use((req, res) =>
    send(
      res,
      notFound((name) => req.get(name)),
    ),
  );
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status =
      (error as { status?: number; statusCode?: number }).status ??
      (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // A client error Express raised itself (a path parameter that is not valid percent-encoding):
      // the client's, answered with its status and not logged as a failure.
      return send(
        res,
        errorResult({
          status,
          code: 'invalid_request',
          requestId: requestIdOf((name) => req.get(name)),
          retryable: false,
          message: (error as Error).message,
        }),
      );
    }
    options.onError?.(error);
    send(
      res,
      internalError((name) => req.get(name)),
    );
  });
  return { listener: app, close: async () => {} };
}
