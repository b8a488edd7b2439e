import { tollbooth } from '@tollbooth/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { readRequestBody } from '../http/body';
import { errorResult, requestIdOf } from '../http/respond';
import type { EdgeRequest, RouteResult } from '../http/types';
import { encodeResult, internalError, notFound, retryAfterSeconds } from './shared';
import type { MountedApp, MountOptions } from './types';

function send(res: Response, result: RouteResult): void {
  const { status, headers, body } = encodeResult(result);
  res.status(status).set(headers);
  if (body === undefined) res.end();
  else res.end(body);
}

const edgeRequest = (req: Request): EdgeRequest => ({ method: req.method, target: req.originalUrl });

/**
 * Mounts the fee service on Express 5: express-rate-limit → tollbooth() (with each paid route's
 * precondition) → routes.
 */
export async function mountExpress(options: MountOptions): Promise<MountedApp> {
  const { edge, rateLimit: limits } = options;
  const app = express();
  app.disable('x-powered-by');
  if (options.trustProxy) app.set('trust proxy', true);

  if (limits.enabled) {
    const redis = limits.redis;
    const limiter = (name: string, max: number, windowMs: number, skip: (req: Request) => boolean) =>
      rateLimit({
        windowMs,
        limit: max,
        standardHeaders: 'draft-7',
        legacyHeaders: false,
        skip,
        // The 429 has no body (docs/fee-service-contract.md#errors).
        handler: (_req, res) => {
          res.status(429).set('retry-after', retryAfterSeconds(windowMs)).end();
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
    app.use(limiter('paid', limits.max, limits.windowMs, (req) => !edge.isPaid(edgeRequest(req))));
    for (const own of options.ownLimits ?? []) {
      app.use(
        limiter(own.name, own.max, own.windowMs, (req) => edge.ownLimit(edgeRequest(req)) !== own.name),
      );
    }
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
