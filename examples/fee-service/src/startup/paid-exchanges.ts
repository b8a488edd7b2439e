import { IncomingMessage, type ServerResponse } from 'node:http';
import type { GateHooks, RequestView } from '@tollbooth/core';
import type { PaidExchangeView } from '../metrics';

/**
 * What the gate's lifecycle hooks told of one request at a paid route: the plain challenge (or the
 * paywall page; no payment), a settled payment's stored response (no money moved), a verified
 * payment (its handler ran), a signed-in access (its handler ran, nothing paid), the code of the gate's own refusal or failure.
 */
export type PaidExchange = PaidExchangeView;

const EXCHANGE = Symbol('fee-service.paidExchange');
type Observed = IncomingMessage & { [EXCHANGE]?: PaidExchange };

/**
 * The Node request under a gate event's request: the adapters hand the gate the framework's own
 * request as `raw` (Express's `req` is the Node request itself, Koa's context holds it as `req`,
 * Fastify's request as `raw`).
 */
function nodeRequestOf(request: RequestView): Observed | undefined {
  const raw = request.raw as { req?: unknown; raw?: unknown } | undefined;
  if (raw instanceof IncomingMessage) return raw;
  if (raw?.req instanceof IncomingMessage) return raw.req;
  if (raw?.raw instanceof IncomingMessage) return raw.raw;
  return undefined;
}

/**
 * Ties the gate's lifecycle hooks to the HTTP exchange they are about: each hook's event carries
 * the request that caused it, and the record is kept on its Node request, where the finished
 * response finds it (`res.req`). A free request costs nothing; a paid one, one small object.
 */
export interface PaidExchanges {
  /** What the gate reported of this response's request; `undefined` when it matched no paid route. */
  of(res: ServerResponse): PaidExchange | undefined;
  /** The gate hooks that record it. */
  hooks: Required<
    Pick<GateHooks, 'onMatched' | 'onChallenge' | 'onReplay' | 'onVerified' | 'onSignedIn' | 'onFailed'>
  >;
}

export function createPaidExchanges(): PaidExchanges {
  return {
    of: (res) => (res.req as Observed | undefined)?.[EXCHANGE],
    hooks: {
      onMatched({ request }) {
        const req = nodeRequestOf(request);
        if (req) req[EXCHANGE] = { challenged: false, replayed: false, verified: false, failure: undefined };
      },
      onChallenge({ request }) {
        const exchange = nodeRequestOf(request)?.[EXCHANGE];
        if (exchange) exchange.challenged = true;
      },
      onReplay(_entry, request) {
        const exchange = nodeRequestOf(request)?.[EXCHANGE];
        if (exchange) exchange.replayed = true;
      },
      onVerified({ request }) {
        const exchange = nodeRequestOf(request)?.[EXCHANGE];
        if (exchange) exchange.verified = true;
      },
      onSignedIn({ request }) {
        const exchange = nodeRequestOf(request)?.[EXCHANGE];
        if (exchange) exchange.signedIn = true;
      },
      onFailed({ request, code }) {
        const exchange = nodeRequestOf(request)?.[EXCHANGE];
        if (exchange) exchange.failure = code ?? 'unknown';
      },
    },
  };
}
