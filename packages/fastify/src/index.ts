// @tollbooth/fastify: a Fastify plugin for the Tollbooth payment gate. It translates the request
// in `onRequest`, settles in `onSend` and writes what the gate decides; no protocol logic.
import {
  createPaymentGate,
  type GateResponse,
  type Outcome,
  type PaidRequest,
  type PaymentGateOptions,
  type RouteConfig,
  type RoutesConfig,
  type RouteTable,
  TollboothError,
  type TollboothGate,
} from '@tollbooth/core';
import {
  applyGateHeaders,
  asBuffer,
  asteriskFormRefusal,
  headerNamesOf,
  sendableBody,
  toBodyBytes,
  toHandlerHeaders,
  toOriginForm,
  toRequestView,
} from '@tollbooth/core/node';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Makes this route a paid route (its key is the route's method and full URL, prefix included). */
    payment?: RouteConfig;
  }
  interface FastifyRequest {
    /** The accepted payment, on paid routes; `null` elsewhere. */
    payment: PaidRequest | null;
  }
  interface FastifyInstance {
    /** The plugin's gate (route table, ledger); available once the instance is ready. */
    tollbooth: TollboothFastify;
  }
}

/** What the plugin decorates the instance with. */
export interface TollboothFastify {
  /** @throws TollboothError before the instance is ready (the table is compiled in `onReady`). */
  readonly gate: TollboothGate;
  /** Shorthand for `gate.routes`, e.g. `createDiscovery({ table: () => app.tollbooth.routes })`. */
  readonly routes: RouteTable;
}

/**
 * The gate's options, where `routes` (keys relative to the plugin's prefix) is optional because
 * routes may declare `config: { payment }` instead; or a gate created elsewhere.
 */
export type TollboothPluginOptions =
  | (Omit<PaymentGateOptions, 'routes'> & { routes?: RoutesConfig })
  | { gate: TollboothGate };

/** Where a paid request's headers stood before its handler ran. */
const HEADERS_BEFORE = Symbol('tollbooth.headersBefore');
/** The body of a gate answer sent from onRequest, handed to onSend as a Buffer. */
const GATE_BODY = Symbol('tollbooth.gateBody');
/** The paid request's `proceed` outcome, settled in onSend. */
const PROCEEDING = Symbol('tollbooth.proceeding');
type Tracked = FastifyRequest & {
  [HEADERS_BEFORE]?: ReadonlySet<string>;
  [GATE_BODY]?: Buffer;
  [PROCEEDING]?: Extract<Outcome, { kind: 'proceed' }>;
};

function send(reply: FastifyReply, response: GateResponse, before?: ReadonlySet<string>): FastifyReply {
  applyGateHeaders(
    {
      names: () => Object.keys(reply.getHeaders()),
      get: (name) => reply.getHeader(name),
      remove: (name) => reply.removeHeader(name),
      set: (name, value) => reply.header(name, value),
    },
    response,
    before,
  );
  return reply.code(response.status);
}

const plugin = async (fastify: FastifyInstance, options: TollboothPluginOptions): Promise<void> => {
  const prefix = fastify.prefix;
  const declared: RoutesConfig = {};
  const problems: string[] = [];
  if (!('gate' in options)) {
    for (const [key, route] of Object.entries(options.routes ?? {})) {
      declared[key.replace(/^(\S+\s+)?\//, (_m, method: string | undefined) => `${method ?? ''}${prefix}/`)] =
        route;
    }
  }
  let gate: TollboothGate | undefined = 'gate' in options ? options.gate : undefined;

  fastify.addHook('onRoute', (route) => {
    const payment = route.config?.payment;
    if (!payment) return;
    if ('gate' in options) {
      problems.push(`route ${route.url}: config.payment needs the plugin to own the gate (no gate option)`);
      return;
    }
    const methods = ([] as string[]).concat(route.method);
    for (const method of methods) {
      // HEAD is gated like GET: skip Fastify's automatic HEAD twin of a paid GET route.
      if (method === 'HEAD' && (methods.includes('GET') || declared[`GET ${route.url}`])) continue;
      const key = `${method} ${route.url}`;
      if (declared[key]) problems.push(`paid route "${key}" is declared twice`);
      declared[key] = payment;
    }
  });
  // Every route is known once the instance is ready: compile the table then, all problems at once.
  fastify.addHook('onReady', async () => {
    if (problems.length > 0) {
      const message = `invalid paid routes:\n- ${problems.join('\n- ')}`;
      throw new TollboothError('invalid_config', message, { details: { problems } });
    }
    if (!('gate' in options)) gate = createPaymentGate({ ...options, routes: declared });
  });

  const current = (): TollboothGate => {
    if (!gate) throw new TollboothError('invalid_config', 'the Tollbooth gate exists once Fastify is ready');
    return gate;
  };
  fastify.decorate('tollbooth', {
    get gate() {
      return current();
    },
    get routes() {
      return current().routes;
    },
  });
  if (!fastify.hasRequestDecorator('payment')) fastify.decorateRequest('payment', null);

  // Callback-style hooks: free routes and unpaid responses pass without creating a promise.
  fastify.addHook('onRequest', (request, reply, done) => {
    // `GET *` is no request for any route (Fastify would serve it as `/`): refused, alike on every adapter.
    const refusal = asteriskFormRefusal(request.raw);
    if (refusal) {
      const body = asBuffer(refusal.body);
      (request as Tracked)[GATE_BODY] = body;
      send(reply, refusal).send(body);
      return;
    }
    // Fastify routed an absolute-form target by its path already; handlers see origin-form too.
    toOriginForm(request.raw);
    const gate = current();
    // The raw target, not Fastify's decoded path: the gate decodes it itself (path tricks).
    if (!gate.isPaid(request.method, request.raw.url ?? '/')) return done();
    const view = toRequestView(request.raw, { protocol: request.protocol, host: request.host });
    view.raw = request;
    gate.handle(view).then((outcome) => {
      if (outcome.kind === 'pass') return done();
      if (outcome.kind === 'proceed') {
        request.payment = outcome.payment;
        (request as Tracked)[PROCEEDING] = outcome;
        (request as Tracked)[HEADERS_BEFORE] = headerNamesOf(reply.getHeaders());
        return done();
      }
      // Sent as a Buffer so Fastify leaves the content type alone; onSend swaps in the string.
      const body = asBuffer(outcome.response.body);
      (request as Tracked)[GATE_BODY] = body;
      send(reply, outcome.response).send(body);
    }, done);
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    const proceeding = (request as Tracked)[PROCEEDING];
    if (!proceeding) {
      // A gate answer nothing has transformed since (no compression hook before this one).
      const body = (request as Tracked)[GATE_BODY];
      return done(null, body !== undefined && payload === body ? sendableBody(body) : payload);
    }
    toBodyBytes(payload)
      .then((body) =>
        proceeding.settle({
          status: reply.statusCode,
          headers: toHandlerHeaders(reply.getHeaders()),
          body,
        }),
      )
      .then((response) => {
        send(reply, response, (request as Tracked)[HEADERS_BEFORE]);
        done(null, sendableBody(response.body));
      }, done);
  });
};

/**
 * Fastify plugin that puts paid routes behind x402 payments: declare them in `routes` (keys
 * relative to the plugin's prefix) or per route in `config: { payment }`. Free routes pass
 * through untouched; the accepted payment is on `request.payment`.
 *
 * @throws TollboothError `invalid_config` (at `ready()`) listing every configuration problem.
 * @example
 * await app.register(tollbooth, { schemes: [createExactEvmScheme()], facilitator });
 * app.get('/api/v1/fees/now', { config: { payment: { accepts: { network: 'eip155:8453', payTo, price: '$0.001' } } } },
 *   async (request) => ({ payer: request.payment?.payer }));
 */
export const tollbooth = fp(plugin, { name: '@tollbooth/fastify', fastify: '5.x' });

export type { PaidRequest, PaymentGateOptions, RouteConfig } from '@tollbooth/core';
