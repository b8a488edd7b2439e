// Deliberately broken resource servers for the audit matrix: each is the audit fixture behind
// Tollbooth on Express with one thing done wrong (no gate, an answer rewritten on its way out, a
// gate option, a ledger per instance, an adapter that settles whatever the handler answered), or
// a naive gate that compares paths as raw strings.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AuditFixture, type AuditServer, auditCorsHeaders } from '@tollbooth/conformance';
import {
  createMemoryLedgerStore,
  createPaymentGate,
  type LedgerStore,
  type PaymentGateOptions,
} from '@tollbooth/core';
import { captureResponse, toRequestView, writeGateResponse } from '@tollbooth/core/node';
import { tollbooth } from '@tollbooth/express';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';

/** An answer on its way out, as a rewrite sees and changes it. */
export interface OutgoingAnswer {
  method: string;
  path: string;
  status: number;
  header(name: string): string | undefined;
  set(name: string, value: string): void;
  remove(name: string): void;
  body: string;
}

export interface Breakage {
  /** No gate at all: every route serves unpaid. */
  ungated?: boolean;
  /** Changes the gate options. */
  gate?(options: AuditFixture['gate']): PaymentGateOptions;
  /** Middleware mounted before the gate. */
  before?(app: Express, fixture: AuditFixture): void;
  /** Changes every answer just before it is sent. */
  rewrite?(answer: OutgoingAnswer): void;
  /** The handler does not get the accepted payment. */
  noPayer?: boolean;
  /** Settles with the gate whatever the handler answered (status 200 reported). */
  settlesRegardless?: boolean;
  /** Two instances, each with its own in-memory ledger, behind a round-robin balancer. */
  twoInstances?: boolean;
  /** Node's limit on request heads (default 16 KiB). */
  maxHeaderSize?: number;
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, maxHeaderSize?: number) {
  const server = createServer(maxHeaderSize ? { maxHeaderSize } : {}, handler);
  return new Promise<AuditServer>((resolve) => {
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

/** Mounts `rewrite` so it sees each final answer (status, headers, body) before it is sent. */
function rewriting(rewrite: (answer: OutgoingAnswer) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    const end = res.end.bind(res) as (chunk?: unknown, encoding?: unknown, cb?: unknown) => Response;
    res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
      const body =
        typeof chunk === 'string' || chunk instanceof Uint8Array
          ? Buffer.from(chunk as string).toString('utf8')
          : '';
      const answer: OutgoingAnswer = {
        method: req.method,
        path: req.path,
        status: res.statusCode,
        header: (name) => {
          const value = res.getHeader(name);
          return value === undefined ? undefined : String(value);
        },
        set: (name, value) => res.setHeader(name, value),
        remove: (name) => res.removeHeader(name),
        body,
      };
      rewrite(answer);
      res.statusCode = answer.status;
      if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(answer.body));
      return end(answer.body, typeof encoding === 'function' ? encoding : cb);
    }) as Response['end'];
    next();
  };
}

/** Like @tollbooth/express, except that it tells the gate every handler answered 200. */
function settlingRegardless(options: PaymentGateOptions) {
  const gate = createPaymentGate(options);
  return async (req: Request, res: Response, next: NextFunction) => {
    if (!gate.isPaid(req.method, req.originalUrl)) return next();
    const outcome = await gate.handle(toRequestView(req, { protocol: req.protocol, url: req.originalUrl }));
    if (outcome.kind === 'pass') return next();
    if (outcome.kind !== 'proceed') return writeGateResponse(res, outcome.response);
    req.payment = outcome.payment;
    const capture = captureResponse(res);
    void capture.done.then(async (handled) =>
      writeGateResponse(res, await outcome.settle({ ...handled, status: 200 })),
    );
    next();
  };
}

function buildApp(fixture: AuditFixture, breakage: Breakage, ledger?: LedgerStore): Express {
  const app = express();
  if (breakage.rewrite) app.use(rewriting(breakage.rewrite));
  // Like a CORS middleware before the gate, as in every adapter harness.
  app.use((req, res, next) => {
    res.set(auditCorsHeaders(req.get('origin')));
    next();
  });
  breakage.before?.(app, fixture);
  if (!breakage.ungated) {
    const options = breakage.gate ? breakage.gate(fixture.gate) : fixture.gate;
    const withLedger = ledger ? { ...options, ledger } : options;
    app.use(breakage.settlesRegardless ? settlingRegardless(withLedger) : tollbooth(withLedger));
  }
  for (const route of fixture.routes) {
    app.get(route.path, async (req, res, next) => {
      try {
        const answer = await fixture.handle(route.name, breakage.noPayer ? undefined : req.payment?.payer);
        res
          .status(answer.status)
          .set(answer.headers ?? {})
          .json(answer.body);
      } catch (error) {
        next(error);
      }
    });
  }
  app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: 'internal' });
  });
  return app;
}

/** Starts the fixture behind Tollbooth on Express, broken as `breakage` says. */
export function startBroken(breakage: Breakage) {
  return async (fixture: AuditFixture): Promise<AuditServer> => {
    if (!breakage.twoInstances) return listen(buildApp(fixture, breakage), breakage.maxHeaderSize);
    const instances = [
      buildApp(fixture, breakage, createMemoryLedgerStore()),
      buildApp(fixture, breakage, createMemoryLedgerStore()),
    ];
    let next = 0;
    return listen((req, res) => {
      const app = instances[next++ % instances.length]!;
      app(req, res);
    });
  };
}

/**
 * A gate that compares the raw request target with the paid path, in front of a router that
 * serves any target naming the same path after the usual normalisations (case, percent
 * decoding, backslashes, doubled and trailing slashes, dot segments, absolute form).
 */
export function startNaivePathGate(fixture: AuditFixture): Promise<AuditServer> {
  const paid = fixture.routes.find((r) => r.name === 'paid')!.path;
  return listen(async (req, res) => {
    const target = req.url ?? '/';
    if (target === paid) {
      res
        .writeHead(402, { 'payment-required': Buffer.from('{"x402Version":2}').toString('base64') })
        .end('{}');
      return;
    }
    let path = target.replace(/^[a-z]+:\/\/[^/]+/i, '').split('?')[0]!;
    for (let i = 0; i < 3; i++) path = decodeURIComponent(path);
    path = path
      .replaceAll('\\', '/')
      .replace(/\/{2,}/g, '/')
      .toLowerCase();
    const segments: string[] = [];
    for (const segment of path.split('/')) {
      if (segment === '..') segments.pop();
      else if (segment !== '.') segments.push(segment);
    }
    path = segments.join('/').replace(/\/+$/, '') || '/';
    if (path === paid) {
      const answer = await fixture.handle('paid', undefined);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      return;
    }
    res.writeHead(404).end();
  });
}
