// One small paid API on each adapter (Express, Fastify, Koa), as a user would write it with the
// framework's defaults, on a real HTTP server: the request-target tests and the fuzz send raw
// requests to all three. Each keeps what was logged at error level (the gate's logger, the
// framework's own error reporting) so a test can assert that no client input produced one.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import Router from '@koa/router';
import { encodeHeader, type RoutesConfig, type TollboothGate } from '@tollbooth/core';
import {
  buildPayment,
  createScriptedFacilitator,
  createSimpleScheme,
  TEST_PAY_TO,
} from '@tollbooth/core/testing';
import { tollbooth as expressTollbooth } from '@tollbooth/express';
import { tollbooth as fastifyTollbooth } from '@tollbooth/fastify';
import { tollbooth as koaTollbooth } from '@tollbooth/koa';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';

export const ADAPTERS = ['express', 'fastify', 'koa'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' };

/** The paid routes of every app: a GET, and a POST under a method-less price pattern. */
export const TARGET_ROUTES: RoutesConfig = {
  'GET /api/paid': { accepts },
  'POST /api/priced/post': { accepts },
  '/api/priced/*': { accepts },
};

/** Free routes every app serves, with the body each answers. */
export const FREE_BODIES: Record<string, string> = {
  '/healthz': '{"status":"ok"}',
  '/api/free': '{"free":true}',
};

/** An error-level report: from the gate's logger, or the framework's own error reporting. */
export interface ErrorReport {
  source: string;
  message: string;
  stack?: string;
}

export interface TargetApp {
  name: AdapterName;
  port: number;
  gate: TollboothGate;
  /** Error-level reports since start (the fuzz and the tests read and clear it). */
  errors: ErrorReport[];
  /** A valid payment header for a paid route key (the scripted facilitator accepts it). */
  payment(key: string): string;
  close(): Promise<void>;
}

function gateLogger(errors: ErrorReport[]) {
  return {
    warn: () => {},
    error: (fields: Record<string, unknown>, message: string) => {
      const err = fields['err'] as Error | undefined;
      errors.push({ source: 'gate', message, ...(err?.stack ? { stack: err.stack } : {}) });
    },
  };
}

async function listen(listener: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

function app(
  name: AdapterName,
  server: Server,
  gate: TollboothGate,
  errors: ErrorReport[],
  stop?: () => Promise<unknown>,
): TargetApp {
  return {
    name,
    port: (server.address() as AddressInfo).port,
    gate,
    errors,
    payment: (key) => encodeHeader(buildPayment(gate.routes.get(key)!.requirements[0]!)),
    close: async () => {
      await closeServer(server);
      await stop?.();
    },
  };
}

async function startExpress(): Promise<TargetApp> {
  const errors: ErrorReport[] = [];
  const middleware = expressTollbooth({
    routes: TARGET_ROUTES,
    schemes: [createSimpleScheme()],
    facilitator: createScriptedFacilitator(),
    logger: gateLogger(errors),
  });
  const application = express();
  application.use(middleware);
  application.get('/api/paid', (req, res) => {
    res.json({ paid: true, payer: req.payment?.payer });
  });
  application.post('/api/priced/post', (_req, res) => {
    res.json({ posted: true });
  });
  application.all('/api/priced/*rest', (req, res) => {
    res.json({ priced: req.method });
  });
  application.get('/healthz', (_req, res) => {
    res.type('json').send(FREE_BODIES['/healthz']);
  });
  application.get('/api/free', (_req, res) => {
    res.type('json').send(FREE_BODIES['/api/free']);
  });
  // Express's own final handler answers errors (a 5xx among them would be a finding).
  application.use(
    (
      error: Error & { status?: number },
      _req: express.Request,
      _res: express.Response,
      next: express.NextFunction,
    ) => {
      const status = error.status ?? 500;
      if (status >= 500)
        errors.push({
          source: 'express',
          message: error.message,
          ...(error.stack ? { stack: error.stack } : {}),
        });
      next(error);
    },
  );
  return app('express', await listen(application), middleware.gate, errors);
}

async function startFastify(): Promise<TargetApp> {
  const errors: ErrorReport[] = [];
  const fastify = Fastify({
    logger: {
      level: 'error',
      stream: {
        write: (line: string) => {
          const entry = JSON.parse(line) as { msg?: string; err?: { stack?: string } };
          errors.push({
            source: 'fastify',
            message: entry.msg ?? line,
            ...(entry.err?.stack ? { stack: entry.err.stack } : {}),
          });
        },
      },
    },
    serverFactory: (handler) => createServer(handler),
  });
  await fastify.register(fastifyTollbooth, {
    routes: TARGET_ROUTES,
    schemes: [createSimpleScheme()],
    facilitator: createScriptedFacilitator(),
    logger: gateLogger(errors),
  });
  fastify.get('/api/paid', async (request) => ({ paid: true, payer: request.payment?.payer }));
  fastify.post('/api/priced/post', async () => ({ posted: true }));
  fastify.all('/api/priced/*', async (request) => ({ priced: request.method }));
  fastify.get('/healthz', async (_request, reply) =>
    reply.type('application/json').send(FREE_BODIES['/healthz']),
  );
  fastify.get('/api/free', async (_request, reply) =>
    reply.type('application/json').send(FREE_BODIES['/api/free']),
  );
  await fastify.ready();
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  return app('fastify', fastify.server, fastify.tollbooth.gate, errors, () => fastify.close());
}

async function startKoa(): Promise<TargetApp> {
  const errors: ErrorReport[] = [];
  const middleware = koaTollbooth({
    routes: TARGET_ROUTES,
    schemes: [createSimpleScheme()],
    facilitator: createScriptedFacilitator(),
    logger: gateLogger(errors),
  });
  const application = new Koa();
  // Koa's default error reporting (console.error of the stack), kept instead of printed.
  application.silent = true;
  application.on('error', (error: Error & { status?: number; expose?: boolean }) => {
    if ((error.status ?? 500) >= 500 || !error.expose) {
      errors.push({ source: 'koa', message: error.message, ...(error.stack ? { stack: error.stack } : {}) });
    }
  });
  const router = new Router();
  router.get('/api/paid', (ctx) => {
    ctx.body = { paid: true, payer: ctx.state.payment?.payer };
  });
  router.post('/api/priced/post', (ctx) => {
    ctx.body = { posted: true };
  });
  router.all('/api/priced/{*rest}', (ctx) => {
    ctx.body = { priced: ctx.method };
  });
  for (const [path, body] of Object.entries(FREE_BODIES)) {
    router.get(path, (ctx) => {
      ctx.type = 'application/json';
      ctx.body = body;
    });
  }
  application.use(middleware);
  application.use(router.routes());
  return app('koa', await listen(application.callback()), middleware.gate, errors);
}

/** The three apps, each on its own port. */
export function startTargetApps(): Promise<TargetApp[]> {
  return Promise.all([startExpress(), startFastify(), startKoa()]);
}

/** A raw HTTP response: status (0 when the server closed without answering), head and body. */
export interface RawResponse {
  status: number;
  head: string;
  headers: Record<string, string>;
  body: string;
}

/** Parses raw response bytes (the first response only). */
export function parseRaw(bytes: Buffer): RawResponse {
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: status ? Number(status[1]) : 0, head, headers, body: end < 0 ? '' : text.slice(end + 4) };
}

/**
 * Sends `request` (the whole request: request line, headers, blank line, body) on a fresh
 * connection and resolves with what came back once the server closes it. The request should
 * carry `Connection: close`; `guardMs` is a hang guard, not a timing assertion.
 */
export function sendRaw(port: number, request: string | Buffer, guardMs = 60_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${guardMs} ms to ${String(request).split('\r\n')[0]}`));
    }, guardMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => {
      clearTimeout(guard);
      resolve(parseRaw(Buffer.concat(chunks)));
    });
    socket.on('error', () => {
      // A reset after a parse error (Node answers 400 and closes): whatever arrived is the answer.
    });
  });
}

/** A raw GET (or another method) with `Host`, `Connection: close` and extra header lines. */
export function rawRequest(
  method: string,
  target: string,
  port: number,
  extra: string[] = [],
  body = '',
): string {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...extra, 'Connection: close'];
  if (body !== '' || method === 'POST' || method === 'PUT')
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
