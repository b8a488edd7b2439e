import Router from '@koa/router';
import { tollbooth } from '@tollbooth/koa';
import Koa, { type Context } from 'koa';
import ratelimit from 'koa-ratelimit';
import { parsedInputOf, readRequestBody } from '../http/body';
import { requestIdOf } from '../http/respond';
import type { EdgeRequest, RouteResult } from '../http/types';
import {
  appendRateLimitFields,
  encodeResult,
  internalError,
  notFound,
  type RateLimitStanding,
} from './shared';
import type { MountedApp, MountOptions } from './types';

function send(ctx: Context, result: RouteResult): void {
  const { status, headers, body } = encodeResult(result);
  ctx.status = status;
  ctx.set(headers);
  ctx.body = body ?? '';
}

/** The request the limits judge (a tools/call's tool, once resolved), else the request's own. */
const edgeRequest = (ctx: Context): EdgeRequest =>
  (ctx.state['edgeRequest'] as EdgeRequest | undefined) ?? { method: ctx.method, target: ctx.originalUrl };

/** Where koa-ratelimit writes a limit's count: read back into the IETF fields, then removed. */
const COUNTED = {
  remaining: 'x-fee-service-limit-remaining',
  reset: 'x-fee-service-limit-reset',
  total: 'x-fee-service-limit-total',
} as const;

/** Turns what koa-ratelimit counted into the IETF fields every mount writes; the standing, if any. */
function answerStanding(ctx: Context, name: string, windowMs: number): RateLimitStanding | undefined {
  const total = ctx.response.get(COUNTED.total);
  if (!total) return undefined;
  const standing: RateLimitStanding = {
    name,
    limit: Number(total),
    windowMs,
    remaining: Number(ctx.response.get(COUNTED.remaining)),
    // koa-ratelimit's reset is in whole seconds, rounded up: never past the window.
    resetSeconds: Math.min(
      windowMs / 1000,
      Math.max(0, Number(ctx.response.get(COUNTED.reset)) - Date.now() / 1000),
    ),
  };
  for (const header of Object.values(COUNTED)) ctx.remove(header);
  appendRateLimitFields(
    {
      get: (header) => ctx.response.get(header) || undefined,
      set: (header, value) => ctx.set(header, value),
    },
    standing,
  );
  return standing;
}

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
  const limiter = (name: string, max: number, windowMs: number) => {
    const apply = ratelimit({
      driver: limits.redis ? 'redis' : 'memory',
      db: limits.redis ?? new Map(),
      namespace: `${limits.prefix ?? 'fee-service:rl:'}koa${name === 'paid' ? '' : `:${name}`}`,
      duration: windowMs,
      max,
      id: (ctx) => ctx.ip,
      headers: COUNTED,
    });
    return async (ctx: Context, next: () => Promise<unknown>) => {
      let passed = false;
      await apply(ctx, async () => {
        passed = true;
        answerStanding(ctx, name, windowMs);
        await next();
      });
      if (passed) return;
      const standing = answerStanding(ctx, name, windowMs);
      // koa-ratelimit writes a text message; the 429 has no body (docs/fee-service-contract.md#errors).
      ctx.body = null;
      ctx.status = 429;
      ctx.set('retry-after', String(Math.max(1, Math.ceil(standing?.resetSeconds ?? windowMs / 1000))));
    };
  };
  if (limits.enabled || options.ownLimits?.some((own) => own.always)) {
    // A tools/call POSTed to /mcp counts as its tool: the body is read for it (and kept).
    app.use(async (ctx, next) => {
      const resolved = edge.resolve(edgeRequest(ctx), () => readRequestBody(ctx.req));
      if (resolved instanceof Promise) ctx.state['edgeRequest'] = await resolved;
      await next();
    });
  }
  if (limits.enabled) {
    const paid = limiter('paid', limits.max, limits.windowMs);
    app.use((ctx, next) => (edge.isPaid(edgeRequest(ctx)) ? paid(ctx, next) : next()));
  }
  // A resource's own limit applies with the edge limit, or always when it says so (the demo's).
  const own = new Map(
    (options.ownLimits ?? [])
      .filter((l) => limits.enabled || l.always)
      .map((l) => [l.name, limiter(l.name, l.max, l.windowMs)]),
  );
  if (own.size > 0) {
    app.use((ctx, next) => {
      const name = edge.ownLimit(edgeRequest(ctx));
      const apply = name === undefined ? undefined : own.get(name);
      return apply ? apply(ctx, next) : next();
    });
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
        parsedInput: () => parsedInputOf(ctx.req),
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
