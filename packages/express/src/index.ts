// @tollbooth/express: a thin Express adapter for the Tollbooth payment gate. It translates the
// request, buffers the handler's response and writes what the gate decides; no protocol logic.
import {
  createPaymentGate,
  type PaidRequest,
  type PaymentGateOptions,
  type TollboothGate,
} from '@tollbooth/core';
import {
  asteriskFormRefusal,
  captureResponse,
  toOriginForm,
  toRequestView,
  writeGateResponse,
} from '@tollbooth/core/node';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

declare global {
  namespace Express {
    interface Request {
      /** The accepted payment, on paid routes (also in `res.locals.payment`). */
      payment?: PaidRequest;
    }
  }
}

/** Either the gate's options, or a gate created elsewhere (shared between apps or adapters). */
export type TollboothOptions = PaymentGateOptions | { gate: TollboothGate };

/** The middleware, with the gate it drives (route table, ledger). */
export type TollboothMiddleware = RequestHandler & { readonly gate: TollboothGate };

/**
 * Express middleware that puts paid routes behind x402 payments. Mount it before the routes it
 * guards; free routes pass through untouched. The accepted payment is on `req.payment` and
 * `res.locals.payment`.
 *
 * @throws TollboothError `invalid_config` listing every configuration problem.
 * @example
 * app.use(tollbooth({
 *   // Base Sepolia with the public test facilitator; Base mainnet needs one that settles it (docs/production.md).
 *   routes: { 'GET /api/v1/fees/now': { accepts: { network: 'eip155:84532', payTo, price: '$0.001' } } },
 *   schemes: [createExactEvmScheme()],
 *   facilitator: createHttpFacilitatorClient({ url: 'https://x402.org/facilitator' }),
 * }));
 */
export function tollbooth(options: TollboothOptions): TollboothMiddleware {
  const gate = 'gate' in options ? options.gate : createPaymentGate(options);

  const paid = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const view = toRequestView(req, {
      protocol: req.protocol,
      // Express 5's req.host: the Host header, or X-Forwarded-Host when 'trust proxy' is set.
      ...(req.host ? { host: req.host } : {}),
      url: req.originalUrl,
    });
    view.raw = req;
    const outcome = await gate.handle(view);
    if (outcome.kind === 'pass') return next();
    if (outcome.kind !== 'proceed') return writeGateResponse(res, outcome.response);

    const payment = outcome.payment;
    req.payment = payment;
    res.locals['payment'] = payment;
    // Headers set so far came from middleware before the gate: they stay on whatever is sent.
    const before = new Set(res.getHeaderNames());
    const capture = captureResponse(res);
    // A client that goes away before the handler answers: nothing is settled, the claim is freed.
    res.once('close', () => {
      if (!capture.ended) {
        capture.restore();
        void outcome.release();
      }
    });
    void capture.done.then(async (handled) => writeGateResponse(res, await outcome.settle(handled), before));
    // A throwing handler reaches Express's error handler, whose (≥ 400) response is captured too.
    next();
  };
  // Free routes and preflights pass synchronously: no promise, no request view.
  const middleware: RequestHandler = (req, res, next) => {
    // `GET *` is no request for any route: refused here, alike on every adapter.
    const refusal = asteriskFormRefusal(req);
    if (refusal) return writeGateResponse(res, refusal);
    // An absolute-form target reaches routing, the gate and handlers as origin-form (RFC 9112).
    if (toOriginForm(req)) req.originalUrl = req.url;
    if (!gate.isPaid(req.method, req.originalUrl)) return next();
    return paid(req, res, next).catch(next);
  };
  return Object.assign(middleware, { gate });
}

export type { PaidRequest, PaymentGateOptions } from '@tollbooth/core';
