import Router from '@koa/router';
import { tollbooth } from '@tollbooth/koa';
import Koa, { type Context } from 'koa';
import ratelimit from 'koa-ratelimit';
import { requestIdOf } from '../http/respond';
import type { EdgeRequest, RouteResult } from '../http/types';
import { encodeResult, internalError, notFound } from './shared';
import type { MountedApp, MountOptions } from './types';

function send(ctx: Context, result: RouteResult): void {
  const { status, headers, body } = encodeResult(result);
  ctx.status = status;
  ctx.set(headers);
  ctx.body = body ?? '';
}

const edgeRequest = (ctx: Context): EdgeRequest => ({
  method: ctx.method,
  target: ctx.originalUrl,
  header: (name) => ctx.get(name) || undefined,
});

/** Mounts the fee service on Koa 3: koa-ratelimit → precondition → tollbooth() → @koa/router. */
export async function mountKoa(options: MountOptions): Promise<MountedApp> {
  const { edge, rateLimit: limits } = options;
  const app = new Koa({ proxy: options.trustProxy });
  app.silent = true;

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      options.onError?.(error);
      send(
        ctx,
        internalError((name) => ctx.get(name) || undefined),
      );
    }
  });
  if (limits.enabled) {
    const limiter = ratelimit({
      driver: limits.redis ? 'redis' : 'memory',
      db: limits.redis ?? new Map(),
      namespace: `${limits.prefix ?? 'fee-service:rl:'}koa`,
      duration: limits.windowMs,
      max: limits.max,
      id: (ctx) => ctx.ip,
    });
    app.use(async (ctx, next) => {
      if (!edge.isPaid(edgeRequest(ctx))) return next();
      await limiter(ctx, next);
      if (ctx.state['rateLimit']) {
        // koa-ratelimit writes a text message; the seed's 429 has no body.
        ctx.body = null;
        ctx.status = 429;
      }
    });
  }
  app.use(async (ctx, next) => {
    const answer = edge.precondition(edgeRequest(ctx));
    if (answer) return send(ctx, answer);
    return next();
  });
  app.use(tollbooth({ gate: options.gate }));

  const router = new Router();
  for (const route of options.routes) {
    const handle = async (ctx: Context) => {
      const header = (name: string) => ctx.get(name) || undefined;
      const payment = ctx.state['payment'];
      const result = await route.handler({
        method: ctx.method,
        url: new URL(`${ctx.protocol}://${ctx.host}${ctx.originalUrl}`),
        params: { ...(ctx['params'] as Record<string, string>) },
        header,
        requestId: payment?.requestId ?? requestIdOf(header),
        payment,
      });
      send(ctx, result);
    };
    if (route.method === 'GET') router.get(route.path, handle);
    else router.post(route.path, handle);
  }
  app.use(router.routes());
  app.use(async (ctx) => {
    send(
      ctx,
      notFound((name) => ctx.get(name) || undefined),
    );
  });
  return { listener: app.callback(), close: async () => {} };
}
