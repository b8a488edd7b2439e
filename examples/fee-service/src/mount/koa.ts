import Router from '@koa/router';
import { tollbooth } from '@tollbooth/koa';
import Koa, { type Context } from 'koa';
import ratelimit from 'koa-ratelimit';
import { readRequestBody } from '../http/body';
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

const edgeRequest = (ctx: Context): EdgeRequest => ({ method: ctx.method, target: ctx.originalUrl });

/**
 * Mounts the fee service on Koa 3: koa-ratelimit → tollbooth() (with each paid route's
 * precondition) → @koa/router.
 */
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
    const limiter = (name: string, max: number, windowMs: number) =>
      ratelimit({
        driver: limits.redis ? 'redis' : 'memory',
        db: limits.redis ?? new Map(),
        namespace: `${limits.prefix ?? 'fee-service:rl:'}koa${name === 'paid' ? '' : `:${name}`}`,
        duration: windowMs,
        max,
        id: (ctx) => ctx.ip,
      });
    const limited = async (ctx: Context, next: () => Promise<unknown>, apply: ReturnType<typeof limiter>) => {
      await apply(ctx, next as never);
      if (ctx.state['rateLimit']) {
        // koa-ratelimit writes a text message; the 429 has no body (docs/fee-service-contract.md#errors).
        ctx.body = null;
        ctx.status = 429;
      }
    };
    const paid = limiter('paid', limits.max, limits.windowMs);
    app.use(async (ctx, next) => {
      if (!edge.isPaid(edgeRequest(ctx))) return next();
      await limited(ctx, next, paid);
    });
    const own = new Map((options.ownLimits ?? []).map((l) => [l.name, limiter(l.name, l.max, l.windowMs)]));
    if (own.size > 0) {
      app.use(async (ctx, next) => {
        const name = edge.ownLimit(edgeRequest(ctx));
        const apply = name === undefined ? undefined : own.get(name);
        if (!apply) return next();
        await limited(ctx, next, apply);
      });
    }
  }
  app.use(tollbooth({ gate: options.gate }));

  const router = new Router();
  for (const route of options.routes) {
    const handle = async (ctx: Context) => {
      const header = (name: string) => ctx.get(name) || undefined;
      const payment = ctx.state['payment'];
      const result = await route.handler({
        method: ctx.method,
        target: ctx.originalUrl,
        url: new URL(`${ctx.protocol}://${ctx.host}${ctx.originalUrl}`),
        params: { ...(ctx['params'] as Record<string, string>) },
        header,
        requestId: payment?.requestId ?? requestIdOf(header),
        payment,
        readBody: () => readRequestBody(ctx.req),
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
