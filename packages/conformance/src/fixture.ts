import { randomUUID } from 'node:crypto';
import type { PaymentGateOptions, RouteConfig, RoutesConfig } from '@tollbooth/core';
import { type AuditFacilitator, createAuditFacilitator } from './audit-facilitator';
import {
  AUDIT_ASSET,
  AUDIT_NETWORK,
  AUDIT_PAY_TO,
  type AuditScheme,
  buildAuditPayment,
  createAuditScheme,
} from './audit-scheme';
import type { AuditControl, AuditPaths, ReplayMode } from './types';

/** The route names of the audit fixture. */
export type AuditRouteName = keyof AuditPaths;

/** Where the fixture's routes live; every one is a `GET` under `/api`. */
export const AUDIT_PATHS: Readonly<Required<AuditPaths>> = {
  paid: '/api/paid',
  other: '/api/other',
  free: '/api/free',
  failing: '/api/failing',
  throwing: '/api/throwing',
  paused: '/api/paused',
  retired: '/api/retired',
  canonical: '/api/canonical',
};

/** One route the harness mounts. */
export interface AuditRoute {
  name: AuditRouteName;
  method: 'GET';
  /** Absolute path, e.g. `/api/paid`. */
  path: string;
  /** The payment terms of a paid route (also in `gate.routes` under `GET <path>`). */
  payment?: RouteConfig;
}

/** What a handler answers; the harness sends `body` as JSON with `status` and `headers`. */
export interface AuditHandlerAnswer {
  status: number;
  body: unknown;
  /** Headers the handler sets (a paid handler sets a cookie, which a replaced answer must not carry). */
  headers?: Record<string, string>;
}

/**
 * What a harness puts before the gate, like a CORS middleware: for a request with an `Origin`,
 * `Access-Control-Allow-Origin` (that origin) and an `Access-Control-Expose-Headers` of its own.
 */
export function auditCorsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {};
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': AUDIT_EXPOSED_HEADER,
    vary: 'Origin',
  };
}

/** The header the harness's CORS middleware exposes. */
export const AUDIT_EXPOSED_HEADER = 'X-Audit-Trace';

/** The cookie a paid handler of the fixture sets. */
export const AUDIT_HANDLER_COOKIE = 'audit-handler=1; Path=/';

/**
 * Everything a framework harness needs to build a target the audits can drive: the routes to
 * mount, the gate options (scripted facilitator double, scheme double, routes config) and the
 * one handler every route calls.
 */
export interface AuditFixture {
  readonly routes: readonly AuditRoute[];
  readonly gate: PaymentGateOptions & { routes: RoutesConfig };
  /**
   * The handler of route `name`. Pass the payer of the accepted payment (from `req.payment`,
   * `request.payment`, `ctx.state.payment`). Throws for the `throwing` route: let the framework's
   * own error handling answer.
   */
  handle(name: AuditRouteName, payer: string | undefined): Promise<AuditHandlerAnswer>;
  readonly control: AuditControl;
  readonly facilitator: AuditFacilitator;
  readonly scheme: AuditScheme;
}

const price = { amount: '1000', asset: AUDIT_ASSET, extra: { name: 'Audit Dollar', version: '1' } };
const accepts = { network: AUDIT_NETWORK, payTo: AUDIT_PAY_TO, price, maxTimeoutSeconds: 120 };

const PAYMENTS: Partial<Record<AuditRouteName, RouteConfig>> = {
  paid: { accepts, description: 'A paid resource' },
  other: { accepts, description: 'Another paid resource at the same price' },
  failing: { accepts },
  throwing: { accepts },
  paused: { accepts, availability: 'paused', retryAfterSeconds: 30 },
  retired: { accepts, availability: 'retired' },
  // The target listens on a port chosen at run time: the rule checks the path and query only.
  canonical: { accepts, canonical: { baseUrl: 'https://audit.invalid', checkOrigin: false } },
};

/** What a fixture is built for. */
export interface AuditFixtureOptions {
  /** The gate's replay mode (`replay` of its options). Default `stored-answer`. */
  replay?: ReplayMode;
}

/** Builds a fresh fixture: new doubles, an empty ledger, zeroed counters. */
export function createAuditFixture(options: AuditFixtureOptions = {}): AuditFixture {
  const facilitator = createAuditFacilitator();
  const scheme = createAuditScheme();
  const runs: Record<string, number> = {};
  const routes = (Object.keys(AUDIT_PATHS) as AuditRouteName[]).map((name) => {
    const route: AuditRoute = { name, method: 'GET', path: AUDIT_PATHS[name] };
    const payment = PAYMENTS[name];
    if (payment) route.payment = payment;
    return route;
  });
  const control: AuditControl = {
    pay: buildAuditPayment,
    facilitator,
    get chain() {
      return scheme.chain;
    },
    set chain(value) {
      scheme.chain = value;
    },
    runs: (name) => runs[name] ?? 0,
  };
  return {
    routes,
    gate: {
      routes: Object.fromEntries(routes.filter((r) => r.payment).map((r) => [`GET ${r.path}`, r.payment!])),
      schemes: [scheme],
      facilitator,
      // Node refuses request heads over 16 KiB (431), so the cap the audits probe sits below that.
      maxPaymentHeaderBytes: 8_192,
      replay: options.replay ?? 'stored-answer',
    },
    async handle(name, payer) {
      const run = (runs[name] ?? 0) + 1;
      runs[name] = run;
      if (name === 'free') return { status: 200, body: { free: true } };
      // Long enough for concurrent duplicates to overlap.
      await new Promise((resolve) => setTimeout(resolve, 15));
      if (name === 'throwing') throw new Error('audit handler failure');
      if (name === 'failing') return { status: 422, body: { error: 'unprocessable' } };
      return {
        status: 200,
        body: { route: name, payer: payer ?? null, run, token: randomUUID() },
        headers: { 'set-cookie': AUDIT_HANDLER_COOKIE },
      };
    },
    control,
    facilitator,
    scheme,
  };
}
