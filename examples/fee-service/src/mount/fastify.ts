import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import rateLimitPlugin from '@fastify/rate-limit';
import { tollbooth } from '@tollbooth/fastify';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { requestIdOf } from '../http/respond';
import type { EdgeRequest, RouteContext, RouteResult } from '../http/types';
import { encodeResult, internalError, notFound } from './shared';
import type { MountedApp, MountOptions } from './types';

function send(reply: FastifyReply, result: RouteResult): FastifyReply {
  const { status, headers, body } = encodeResult(result);
  reply.code(status).headers(headers);
  return body === undefined ? reply.send() : reply.send(body);
}

const edgeRequest = (request: FastifyRequest): EdgeRequest => ({
  method: request.method,
  url: `${request.protocol}://${request.host}${request.raw.url ?? request.url}`,
  header: (name) => {
    const value = request.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  },
});

/** The edge view of a request, built once in `onRequest` and reused by the route handler. */
const VIEW = Symbol('fee-service.edgeView');
type Viewed = FastifyRequest & { [VIEW]?: EdgeRequest };

function viewOf(request: FastifyRequest): EdgeRequest {
  const viewed = request as Viewed;
  let view = viewed[VIEW];
  if (view === undefined) {
    view = edgeRequest(request);
    viewed[VIEW] = view;
  }
  return view;
}

/** The handler's context; the request id (a fresh UUID when none came) is made only when read. */
function routeContext(request: FastifyRequest, view: EdgeRequest): RouteContext {
  const payment = request.payment ?? undefined;
  let requestId = payment?.requestId;
  return {
    method: request.method,
    url: new URL(view.url),
    params: { ...(request.params as Record<string, string>) },
    header: view.header,
    get requestId() {
      requestId ??= requestIdOf(view.header);
      return requestId;
    },
    payment,
  };
}

/**
 * Mounts the fee service on Fastify 5 (the default): @fastify/rate-limit's limiter in an
 * application-level `onRequest` hook registered before the tollbooth plugin (its per-route hooks
 * would run after the gate), then the precondition, the gate and the routes.
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
  });

  await app.register(rateLimitPlugin, {
    global: false,
    max: limits.max,
    timeWindow: limits.windowMs,
    ...(limits.redis
      ? { redis: limits.redis, nameSpace: `${limits.prefix ?? 'fee-service:rl:'}fastify:` }
      : {}),
  });
  const check = app.createRateLimit();
  // Callback style: a free request passes without a promise (the limiter is asked only on paid routes).
  const guard = (reply: FastifyReply, view: EdgeRequest, done: () => void) => {
    const answer = edge.precondition(view);
    if (answer) {
      send(reply, answer);
      return;
    }
    done();
  };
  app.addHook('onRequest', (request, reply, done) => {
    const view = viewOf(request);
    if (!(limits.enabled && edge.isPaid(view))) return guard(reply, view, done);
    check(request)
      .then((verdict) => {
        if (!verdict.isAllowed && verdict.isExceeded) {
          // The seed's 429 has no body.
          reply.code(429).header('retry-after', String(verdict.ttlInSeconds)).send();
          return;
        }
        guard(reply, view, done);
      })
      .catch(done);
  });
  await app.register(tollbooth, { gate: options.gate });

  for (const route of options.routes) {
    app.route({
      method: route.method,
      url: route.path,
      // Not async: a synchronous handler result is sent without a promise or a microtask.
      handler: (request, reply) => {
        const view = viewOf(request);
        const result = route.handler(routeContext(request, view));
        if (result instanceof Promise) return result.then((answer) => send(reply, answer));
        send(reply, result);
      },
    });
  }
  app.setNotFoundHandler((request, reply) => send(reply, notFound(edgeRequest(request).header)));
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // Client errors Fastify raised itself (body parsing, …): keep their status.
      return reply.code(status).send({
        error: {
          code: 'bad_request',
          message: (error as Error).message,
          request_id: requestIdOf(edgeRequest(request).header),
          retryable: false,
        },
      });
    }
    options.onError?.(error);
    return send(reply, internalError(edgeRequest(request).header));
  });
  await app.ready();
  if (!handler) throw new Error('fastify did not hand over its request handler');
  return { listener: handler, close: () => app.close() };
}
