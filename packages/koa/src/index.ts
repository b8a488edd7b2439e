// @tollbooth/koa: a thin Koa middleware for the Tollbooth payment gate. It translates the
// request, settles after `await next()` and writes what the gate decides; no protocol logic.
import { buffer } from 'node:stream/consumers';
import {
  createPaymentGate,
  type GateResponse,
  type HandlerResponse,
  type PaidRequest,
  type PaymentGateOptions,
  type TollboothGate,
  toRequestView,
} from '@tollbooth/core';
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

/** The bytes Koa would send for `ctx.body`: Buffer, string, stream, Blob/Response, JSON or nothing. */
async function bodyBytes(body: unknown): Promise<Uint8Array> {
  if (body === null || body === undefined) return new Uint8Array();
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  if (body instanceof Blob || body instanceof Response) return new Uint8Array(await body.arrayBuffer());
  if (typeof (body as { pipe?: unknown }).pipe === 'function' || body instanceof ReadableStream) {
    return buffer(body as NodeJS.ReadableStream);
  }
  return Buffer.from(JSON.stringify(body), 'utf8');
}

function handlerResponse(ctx: Context, body: Uint8Array): HandlerResponse {
  const headers: HandlerResponse['headers'] = {};
  for (const [name, value] of Object.entries(ctx.response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value : String(value);
  }
  return { status: ctx.status, headers, body };
}

function send(ctx: Context, response: GateResponse): void {
  for (const name of Object.keys(ctx.response.headers)) ctx.remove(name);
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) {
    ctx.set(name, name === 'set-cookie' ? value.split('\n') : value);
  }
  ctx.body = Buffer.from(response.body);
}

/**
 * Koa middleware that puts paid routes behind x402 payments. Mount it before the router; free
 * routes pass through untouched. The accepted payment is on `ctx.state.payment`; the handler's
 * response is settled after `await next()`, and a throw downstream releases the payment.
 *
 * @throws TollboothError `invalid_config` listing every configuration problem.
 * @example
 * app.use(tollbooth({
 *   routes: { 'GET /api/v1/fees/now': { accepts: { network: 'eip155:8453', payTo, price: '$0.001' } } },
 *   schemes: [exactEvmScheme()],
 *   facilitator: createHttpFacilitatorClient({ url: 'https://x402.org/facilitator' }),
 * }));
 * app.use(router.routes());
 */
export function tollbooth(options: TollboothOptions): TollboothMiddleware {
  const gate = 'gate' in options ? options.gate : createPaymentGate(options);

  const middleware: Middleware = async (ctx, next) => {
    // `originalUrl` is the target as received; the gate decodes it itself (path tricks).
    const view = toRequestView(ctx.req, { protocol: ctx.protocol, host: ctx.host, url: ctx.originalUrl });
    view.raw = ctx;
    const outcome = await gate.handle(view);
    if (outcome.kind === 'pass') return next();
    if (outcome.kind !== 'proceed') return send(ctx, outcome.response);

    const payment = outcome.payment;
    ctx.state['payment'] = payment;
    try {
      await next();
    } catch (error) {
      // Nothing is settled for a handler that throws; Koa answers the error as usual.
      await gate.release(payment);
      throw error;
    }
    send(ctx, await gate.finish(payment, handlerResponse(ctx, await bodyBytes(ctx.body))));
  };
  return Object.assign(middleware, { gate });
}

export type { PaidRequest, PaymentGateOptions } from '@tollbooth/core';
