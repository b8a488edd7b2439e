import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GateHooks } from '@tollbooth/core';

/** What the gate's lifecycle hooks told of one request at a paid route. */
export interface PaidExchange {
  /** Answered the plain 402 challenge (or the paywall page): the request carried no payment. */
  challenged: boolean;
  /** Answered with a settled payment's stored response: no money moved for it. */
  replayed: boolean;
}

const EXCHANGE = Symbol('fee-service.paidExchange');
type Observed = ServerResponse & { [EXCHANGE]?: PaidExchange };

/**
 * Ties the gate's lifecycle hooks to the HTTP exchange they are about. The hooks' events name the
 * route and the request id, not the request, so the service's HTTP server dispatches each request
 * inside {@link PaidExchanges.dispatch}, and a hook called while the gate handles it finds that
 * request's response. A free request costs the scope and nothing else; a paid one, one small object.
 */
export interface PaidExchanges {
  /** Runs the mounted application's listener for one request, inside that request's scope. */
  dispatch(
    listener: (req: IncomingMessage, res: ServerResponse) => void,
    req: IncomingMessage,
    res: ServerResponse,
  ): void;
  /** What the gate reported of this response's request; `undefined` when it matched no paid route. */
  of(res: ServerResponse): PaidExchange | undefined;
  /** The gate hooks that record it. */
  hooks: Required<Pick<GateHooks, 'onMatched' | 'onChallenge' | 'onReplay'>>;
}

export function createPaidExchanges(): PaidExchanges {
  const scope = new AsyncLocalStorage<Observed>();
  const current = () => scope.getStore()?.[EXCHANGE];
  return {
    dispatch: (listener, req, res) => scope.run(res, listener, req, res),
    of: (res) => (res as Observed)[EXCHANGE],
    hooks: {
      onMatched() {
        const res = scope.getStore();
        if (res) res[EXCHANGE] = { challenged: false, replayed: false };
      },
      onChallenge() {
        const exchange = current();
        if (exchange) exchange.challenged = true;
      },
      onReplay() {
        const exchange = current();
        if (exchange) exchange.replayed = true;
      },
    },
  };
}
