// The one audit list, run against every adapter through a real server listening on a port.
// Each audit gets a fresh app around a fresh fixture (scripted facilitator double, scheme
// double, empty ledger), so audits cannot leak state into each other.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import {
  AUDITS,
  type AuditFixture,
  type AuditServer,
  auditCorsHeaders,
  runAudit,
} from '@tollbooth/conformance';
import { tollbooth as expressTollbooth } from '@tollbooth/express';
import { tollbooth as fastifyTollbooth } from '@tollbooth/fastify';
import { tollbooth as koaTollbooth } from '@tollbooth/koa';
import express, { type NextFunction, type Request, type Response } from 'express';
import Fastify, { type FastifyContextConfig, type FastifyInstance } from 'fastify';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';

function listen(server: Server): Promise<AuditServer> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        baseUrl: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

async function startExpress(fixture: AuditFixture): Promise<AuditServer> {
  const app = express();
  // Like a CORS middleware before the gate.
  app.use((req, res, next) => {
    res.set(auditCorsHeaders(req.get('origin')));
    next();
  });
  app.use(expressTollbooth(fixture.gate));
  for (const route of fixture.routes) {
    app.get(route.path, async (req, res) => {
      const answer = await fixture.handle(route.name, req.payment?.payer);
      res
        .status(answer.status)
        .set(answer.headers ?? {})
        .json(answer.body);
    });
  }
  app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: 'internal' });
  });
  return listen(createServer(app));
}

async function listenFastify(app: ReturnType<typeof Fastify>): Promise<AuditServer> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { baseUrl: address, close: () => app.close() };
}

/** Like a CORS plugin: an onRequest hook that runs before the gate's. */
function corsBeforeTheGate(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(auditCorsHeaders(request.headers.origin));
    done();
  });
}

/** Paid routes declared in the plugin options, plugin registered at the root. */
async function startFastify(fixture: AuditFixture): Promise<AuditServer> {
  const app = Fastify({ forceCloseConnections: true });
  corsBeforeTheGate(app);
  await app.register(fastifyTollbooth, fixture.gate);
  for (const route of fixture.routes) {
    app.get(route.path, async (request, reply) => {
      const answer = await fixture.handle(route.name, request.payment?.payer);
      return reply
        .code(answer.status)
        .headers(answer.headers ?? {})
        .send(answer.body);
    });
  }
  return listenFastify(app);
}

/** Paid routes declared per route in `config.payment`, plugin encapsulated under the `/api` prefix. */
async function startFastifyPerRoute(fixture: AuditFixture): Promise<AuditServer> {
  const app = Fastify({ forceCloseConnections: true });
  corsBeforeTheGate(app);
  const { routes: _declaredInRoutes, ...gate } = fixture.gate;
  await app.register(
    async (api) => {
      await api.register(fastifyTollbooth, gate);
      for (const route of fixture.routes) {
        const config: FastifyContextConfig = route.payment ? { payment: route.payment } : {};
        api.get(route.path.replace(/^\/api/, ''), { config }, async (request, reply) => {
          const answer = await fixture.handle(route.name, request.payment?.payer);
          return reply
            .code(answer.status)
            .headers(answer.headers ?? {})
            .send(answer.body);
        });
      }
    },
    { prefix: '/api' },
  );
  return listenFastify(app);
}

async function startKoa(fixture: AuditFixture): Promise<AuditServer> {
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  for (const route of fixture.routes) {
    router.get(route.path, async (ctx) => {
      const answer = await fixture.handle(route.name, ctx.state.payment?.payer);
      ctx.status = answer.status;
      ctx.set(answer.headers ?? {});
      ctx.body = answer.body;
    });
  }
  app.use((ctx, next) => {
    ctx.set(auditCorsHeaders(ctx.get('origin') || undefined));
    return next();
  });
  app.use(koaTollbooth(fixture.gate));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return listen(createServer(app.callback()));
}

const TARGETS = [
  { name: 'Express 5 (tollbooth() middleware)', start: startExpress },
  { name: 'Fastify 5 (plugin with a routes option)', start: startFastify },
  { name: 'Fastify 5 (per-route config, encapsulated under a prefix)', start: startFastifyPerRoute },
  { name: 'Koa 3 (tollbooth() middleware and @koa/router)', start: startKoa },
];

describe.each(TARGETS)('$name', ({ start }) => {
  // Each audit in the replay mode it is for: the gate built with `replay: 'strict'` for those of
  // strict replay, with the default for the others.
  it.each(AUDITS.map((audit) => [audit.id, audit.sentence, audit] as const))(
    '%s %s',
    async (_id, _sentence, audit) => {
      const result = await runAudit(audit, { start }, { replay: audit.replay ?? 'stored-answer' });
      expect(result.message ?? '').toBe('');
      expect(result.status).toBe('passed');
    },
  );

  it.each(['stored-answer', 'strict'] as const)(
    'fails the replay audits of the other mode when built with replay %s',
    async (mode) => {
      const other = AUDITS.filter((audit) => audit.replay !== undefined && audit.replay !== mode);
      expect(other.map((a) => a.id).sort()).toEqual(
        mode === 'strict' ? ['ASET-09', 'ASET-10'] : ['ASET-16', 'ASET-17'],
      );
      // The fixture says one mode, the server keeps the other.
      const misbuilt = (fixture: AuditFixture) =>
        start({ ...fixture, gate: { ...fixture.gate, replay: mode } });
      for (const audit of other) {
        const result = await runAudit(audit, { start: misbuilt }, { replay: audit.replay! });
        expect(result.status, audit.id).toBe('failed');
      }
    },
  );
});

describe('the audit list', () => {
  it('has unique, well-formed ids and RFC 2119 sentences, each from the x402 specification or the Tollbooth profile', () => {
    const ids = AUDITS.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const audit of AUDITS) {
      expect(audit.id).toMatch(/^A[A-Z0-9]+-\d{2}$/);
      expect(audit.sentence.startsWith(`${audit.level} `)).toBe(true);
      expect(['x402', 'tollbooth']).toContain(audit.profile);
    }
  });
});
