// @tollbooth/koa: a thin Koa middleware for the Tollbooth payment gate. It translates the
// request, settles after `await next()` and writes what the gate decides; no protocol logic.
import {
  createPaymentGate,
  type GateResponse,
  type PaidRequest,
  type PaymentGateOptions,
  type TollboothGate,
} from '@tollbooth/core';
import {
  applyGateHeaders,
  asBuffer,
  asteriskFormRefusal,
  type HeaderTarget,
  headerNamesOf,
  nodeHeaderTarget,
  sendableBody,
  toBodyBytes,
  toHandlerHeaders,
  toOriginForm,
  toRequestView,
} from '@tollbooth/core/node';
import type { Context, Middleware } from 'koa';

declare module 'koa' {
  interface DefaultState {
    /** The accepted payment, on paid routes. */
    payment?: PaidRequest;
  }
}

/** Either the gate's options, or a gate created elsewhere (shared between apps or adapters). */
export type TollboothOptions = PaymentGateOptions | { gate: TollboothGate };

/** The middleware, with the gate it drives (route table, ledger). */
export type TollboothMiddleware = Middleware & { readonly gate: TollboothGate };

/** Koa's own header calls: they do nothing once the head is sent (a handler that wrote to `ctx.res`). */
function koaHeaderTarget(ctx: Context): HeaderTarget {
  return {
    names: () => Object.keys(ctx.response.headers),
    get: (name) => ctx.response.get(name) || undefined,
    remove: (name) => ctx.remove(name),
    set: (name, value) => ctx.set(name, value),
  };
}

function send(ctx: Context, response: GateResponse, before?: ReadonlySet<string>): void {
  ctx.status = response.status;
  // Node's response directly (what ctx.set does, without copying every header to list the names).
  const res = ctx.res;
  applyGateHeaders(ctx.headerSent ? koaHeaderTarget(ctx) : nodeHeaderTarget(res), response, before);
  // A string is written with the head in one piece; Koa would type an untyped string as text.
  const typed = ctx.headerSent ? ctx.response.get('Content-Type') : res.hasHeader('content-type');
  ctx.body = typed ? sendableBody(response.body) : asBuffer(response.body);
}

/**
 * Koa middleware that puts paid routes behind x402 payments. Mount it before the router; free
 * routes pass through untouched. The accepted payment is on `ctx.state.payment`; the handler's
 * response is settled after `await next()`, and a throw downstream releases the payment.
 *
 * @throws TollboothError `invalid_config` listing every configuration problem.
 * @example
 * app.use(tollbooth({
 *   // Base Sepolia with the public test facilitator; Base mainnet needs one that settles it (docs/production.md).
 *   routes: { 'GET /api/v1/fees/now': { accepts: { network: 'eip155:84532', payTo, price: '$0.001' } } },
 *   schemes: [createExactEvmScheme()],
 *   facilitator: createHttpFacilitatorClient({ url: 'https://x402.org/facilitator' }),
 * }));
 * app.use(router.routes());
 */
export function tollbooth(options: TollboothOptions): TollboothMiddleware {
  const gate = 'gate' in options ? options.gate : createPaymentGate(options);

  const paid: Middleware = async (ctx, next) => {
    // `originalUrl` is the target as received; the gate decodes it itself (path tricks).
    const view = toRequestView(ctx.req, { protocol: ctx.protocol, host: ctx.host, url: ctx.originalUrl });
    view.raw = ctx;
    const outcome = await gate.handle(view);
    if (outcome.kind === 'pass') return next();
    if (outcome.kind !== 'proceed') return send(ctx, outcome.response);

    const payment = outcome.payment;
    ctx.state['payment'] = payment;
    // Headers set so far came from middleware before the gate: they stay on whatever is sent.
    const before = headerNamesOf(ctx.response.headers);
    try {
      await next();
    } catch (error) {
      if (payment.settlement) {
        // Settled before the handler: the payer hears that (receipt, retry the payload), not a bare 500.
        ctx.app.emit('error', error, ctx);
        const failed = { status: 500, headers: {}, body: new Uint8Array() };
        return send(ctx, await outcome.settle(failed), before);
      }
      // Nothing is settled for a handler that throws; Koa answers the error as usual.
      await outcome.release();
      throw error;
    }
    const handled = {
      status: ctx.status,
      headers: toHandlerHeaders(ctx.response.headers),
      body: await toBodyBytes(ctx.body),
    };
    send(ctx, await outcome.settle(handled), before);
  };
  // Free routes and preflights go straight to the next middleware, without an async frame.
  const middleware: Middleware = (ctx, next) => {
    // `GET *` is no request for any route (Koa would hand `*` to the router): refused, alike on every adapter.
    const refusal = asteriskFormRefusal(ctx.req);
    if (refusal) {
      send(ctx, refusal);
      return Promise.resolve();
    }
    // An absolute-form target reaches routing, the gate and handlers as origin-form (RFC 9112).
    if (toOriginForm(ctx.req)) {
      ctx.originalUrl = ctx.req.url!;
      ctx.request.originalUrl = ctx.req.url!;
    }
    return gate.isPaid(ctx.method, ctx.originalUrl) ? paid(ctx, next) : next();
  };
  return Object.assign(middleware, { gate });
}

export type { PaidRequest, PaymentGateOptions } from '@tollbooth/core';
