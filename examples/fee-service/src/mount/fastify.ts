import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import rateLimitPlugin from '@fastify/rate-limit';
import { tollbooth } from '@tollbooth/fastify';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { requestIdOf } from '../http/respond';
import type { EdgeRequest, RouteResult } from '../http/types';
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
  app.addHook('onRequest', async (request, reply) => {
    const view = edgeRequest(request);
    if (limits.enabled && edge.isPaid(view)) {
      const verdict = await check(request);
      if (!verdict.isAllowed && verdict.isExceeded) {
        // The seed's 429 has no body.
        return reply.code(429).header('retry-after', String(verdict.ttlInSeconds)).send();
      }
    }
    const answer = edge.precondition(view);
    if (answer) return send(reply, answer);
  });
  await app.register(tollbooth, { gate: options.gate });

  for (const route of options.routes) {
    app.route({
      method: route.method,
      url: route.path,
      handler: async (request, reply) => {
        const view = edgeRequest(request);
        const result = await route.handler({
          method: request.method,
          url: new URL(view.url),
          params: { ...(request.params as Record<string, string>) },
          header: view.header,
          requestId: request.payment?.requestId ?? requestIdOf(view.header),
          payment: request.payment ?? undefined,
        });
        return send(reply, result);
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
