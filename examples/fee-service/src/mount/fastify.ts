import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import rateLimitPlugin from '@fastify/rate-limit';
import { type PaidRequest, tollbooth } from '@tollbooth/fastify';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { parsedInputOf, readRequestBody } from '../http/body';
import { errorResult, requestIdOf } from '../http/respond';
import type { EdgeRequest, RouteContext, RouteResult } from '../http/types';
import { appendRateLimitFields, encodeResult, internalError, notFound } from './shared';
import type { MountedApp, MountOptions } from './types';

function send(reply: FastifyReply, result: RouteResult): FastifyReply {
  const { status, headers, body } = encodeResult(result);
  reply.code(status).headers(headers);
  if (body === undefined) return reply.send();
  // Fastify appends a charset to a JSON content type without one when the payload is a string; a
  // Buffer is sent with the headers as given (text goes out with the headers in a single chunk).
  const type = headers['content-type'];
  if (typeof body === 'string' && type !== undefined && type.includes('json') && !type.includes('charset')) {
    return reply.send(Buffer.from(body, 'utf8'));
  }
  return reply.send(body);
}

/** Case-insensitive header lookup on a Fastify request (repeated headers joined with `, `). */
function headerReader(request: FastifyRequest): (name: string) => string | undefined {
  return (name) => {
    const value = request.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  };
}

/**
 * A Fastify request as the rate limits and the route handlers see it, made once per request in
 * `onRequest`. What most requests never read (the URL object, the params copy, the header
 * reader, the request id) is made on first read: a free request costs one small object.
 */
class FastifyRequestView implements EdgeRequest, RouteContext {
  readonly method: string;
  readonly target: string;
  readonly #request: FastifyRequest;
  #url: URL | undefined;
  #params: Record<string, string> | undefined;
  #header: ((name: string) => string | undefined) | undefined;
  #requestId: string | undefined;

  constructor(request: FastifyRequest) {
    this.#request = request;
    this.method = request.method;
    this.target = request.raw.url ?? request.url;
  }

  /** The request URL as received, made absolute with the request's own scheme and host. */
  get url(): URL {
    this.#url ??= new URL(`${this.#request.protocol}://${this.#request.host}${this.target}`);
    return this.#url;
  }

  get params(): Record<string, string> {
    this.#params ??= { ...(this.#request.params as Record<string, string>) };
    return this.#params;
  }

  /** A reader that may be passed around on its own (`requestIdOf(context.header)`). */
  get header(): (name: string) => string | undefined {
    this.#header ??= headerReader(this.#request);
    return this.#header;
  }

  /** The gate's request id on paid routes, else the request's `X-Request-Id` or a fresh UUID. */
  get requestId(): string {
    this.#requestId ??= this.payment?.requestId ?? requestIdOf(this.header);
    return this.#requestId;
  }

  get payment(): PaidRequest | undefined {
    return this.#request.payment ?? undefined;
  }

  /** The body, read from the raw request once (Fastify's own parsers are off, see below). */
  readBody(): Promise<Buffer> {
    return readRequestBody(this.#request.raw);
  }

  /** What the paid route's precondition parsed, kept on the raw request. */
  parsedInput(): unknown {
    return parsedInputOf(this.#request.raw);
  }
}

const VIEW = Symbol('fee-service.requestView');
type Viewed = FastifyRequest & { [VIEW]?: FastifyRequestView };

function viewOf(request: FastifyRequest): FastifyRequestView {
  const viewed = request as Viewed;
  let view = viewed[VIEW];
  if (view === undefined) {
    view = new FastifyRequestView(request);
    viewed[VIEW] = view;
  }
  return view;
}

/**
 * Mounts the fee service on Fastify 5 (the default): @fastify/rate-limit's limiter in an
 * application-level `onRequest` hook registered before the tollbooth plugin (its per-route hooks
 * would run after the gate), then the gate (with each paid route's precondition) and the routes.
 */
export async function mountFastify(options: MountOptions): Promise<MountedApp> {
  const { edge, rateLimit: limits } = options;
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const app = Fastify({
    trustProxy: options.trustProxy,
    logger: false,
    // The service owns the HTTP server; Fastify only hands over its request handler.
    serverFactory: (fastifyHandler) => {
      handler = fastifyHandler;
      return createServer(fastifyHandler);
    },
    // A target Fastify's router cannot read (`/%zz`, an absolute-form target with a #fragment) is
    // refused before any hook, so before the gate: in the service's Error body, like the others.
    frameworkErrors: (error, request, reply) => {
      const requestId = requestIdOf(headerReader(request as FastifyRequest));
      const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 400;
      send(
        reply as FastifyReply,
        errorResult({
          status,
          code: error.code === 'FST_ERR_BAD_URL' ? 'invalid_request_target' : 'invalid_request',
          requestId,
          retryable: false,
          message:
            error.code === 'FST_ERR_BAD_URL' ? 'the request target is not a valid URL path' : error.message,
        }),
      );
    },
  });

  await app.register(rateLimitPlugin, {
    global: false,
    max: limits.max,
    timeWindow: limits.windowMs,
    ...(limits.redis
      ? { redis: limits.redis, nameSpace: `${limits.prefix ?? 'fee-service:rl:'}fastify:` }
      : {}),
  });
  type Limiter = ReturnType<typeof app.createRateLimit>;
  const check: Limiter = app.createRateLimit();
  // A resource's own limit applies with the edge limit, or always when it says so (the demo's).
  const own = new Map(
    (options.ownLimits ?? [])
      .filter((limit) => limits.enabled || limit.always)
      .map((limit) => [
        limit.name,
        app.createRateLimit({
          max: limit.max,
          timeWindow: limit.windowMs,
          keyGenerator: (request) => `${limit.name}:${request.ip}`,
        }),
      ]),
  );
  /**
   * Writes a limit's standing (the IETF fields every mount writes) and, past it, the 429 — no
   * body (docs/fee-service-contract.md#errors). Whether it refused.
   */
  const answer = (reply: FastifyReply, name: string, verdict: Awaited<ReturnType<Limiter>>): boolean => {
    if (verdict.isAllowed) return false;
    appendRateLimitFields(
      { get: (header) => reply.getHeader(header), set: (header, value) => reply.header(header, value) },
      {
        name,
        limit: verdict.max,
        windowMs: verdict.timeWindow,
        remaining: verdict.remaining,
        resetSeconds: verdict.ttlInSeconds,
      },
    );
    if (!verdict.isExceeded) return false;
    reply
      .code(429)
      .header('retry-after', String(Math.max(1, verdict.ttlInSeconds)))
      .send();
    return true;
  };
  // Callback style: a free request passes without a promise (the limiter is asked only on paid routes).
  const ownLimit = (request: FastifyRequest, reply: FastifyReply, view: EdgeRequest, done: () => void) => {
    const name = own.size > 0 ? edge.ownLimit(view) : undefined;
    const limiter = name === undefined ? undefined : own.get(name);
    if (!limiter) return done();
    limiter(request)
      .then((verdict) => {
        if (!answer(reply, name!, verdict)) done();
      })
      .catch(done);
  };
  const limit = (request: FastifyRequest, reply: FastifyReply, view: EdgeRequest, done: () => void) => {
    if (!edge.isPaid(view)) {
      if (own.size === 0) return done();
      return ownLimit(request, reply, view, done);
    }
    if (!limits.enabled) return ownLimit(request, reply, view, done);
    check(request)
      .then((verdict) => {
        if (!answer(reply, 'paid', verdict)) ownLimit(request, reply, view, done);
      })
      .catch(done);
  };
  // No limit to apply (RATE_LIMIT_ENABLED=false, no resource's own): no hook, nothing per request.
  if (limits.enabled || own.size > 0)
    app.addHook('onRequest', (request, reply, done) => {
      const view = viewOf(request);
      // A tools/call POSTed to /mcp counts as its tool: the body is read for it (and kept).
      const resolved = edge.resolve(view, () => view.readBody());
      if (!(resolved instanceof Promise)) return limit(request, reply, resolved, done);
      resolved.then((tool) => limit(request, reply, tool, done), done);
    });
  // Bodies are read once by the gate's route precondition (to validate them before any challenge)
  // and by the handlers through `readBody()`; Fastify's own parsers would wait for a stream already read.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null, undefined));
  await app.register(tollbooth, { gate: options.gate });

  for (const route of options.routes) {
    app.route({
      method: route.method,
      url: route.path,
      // Not async: a synchronous handler result is sent without a promise or a microtask.
      handler: (request, reply) => {
        const result = route.handler(viewOf(request));
        if (result instanceof Promise) return result.then((answer) => send(reply, answer));
        send(reply, result);
      },
    });
  }
  app.setNotFoundHandler((request, reply) => send(reply, notFound(headerReader(request))));
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // Client errors Fastify raised itself (body parsing, …): keep their status.
      return reply.code(status).send({
        error: {
          code: 'bad_request',
          message: (error as Error).message,
          request_id: requestIdOf(headerReader(request)),
          retryable: false,
        },
      });
    }
    options.onError?.(error);
    return send(reply, internalError(headerReader(request)));
  });
  await app.ready();
  if (!handler) throw new Error('fastify did not hand over its request handler');
  return { listener: handler, close: () => app.close() };
}
