import type { Availability, PaidRequest, RouteConfig, RoutesConfig } from '@tollbooth/core';
import { addBazaarExtensions, type FreeRoute } from '@tollbooth/core/discovery';
import type * as z from 'zod';
import { acceptsOf, missingCapabilities, PLANNED_CAPABILITIES } from '../capabilities';
import { bodyError, incomingMessageOf, keepParsedInput, readRequestBody } from '../http/body';
import {
  type ErrorCodeSpec,
  errorResult,
  requestIdOf,
  SERVICE_ERROR_CODES,
  type ServiceErrorCode,
} from '../http/respond';
import type { RouteContext, RouteResult, ServiceRoute } from '../http/types';
import { toGateResponse } from '../mount/shared';
import { operatorAvailability } from './availability';
import { type RawInput, takesBody, unsellable, validateInput } from './input';
import {
  type AnyResource,
  isBuilt,
  isPaid,
  type ResourceContext,
  type ResourceEnvironment,
  type ResourceHandler,
  type ResourceInput,
  routeKey,
} from './kit';

/** A price pattern: what any other path under a prefix costs (`/api/v1/ai/*`). */
export interface PricePattern {
  /** Path ending in `*`. */
  path: string;
  /** Atomic units of the configured token. */
  amount: string;
  maxTimeoutSeconds: number;
  description: string;
}

/** How a resource is published in a deployment: its availability and, when paused, why. */
export interface Publication {
  resource: AnyResource;
  key: string;
  availability: Availability;
  /** Why it is not active (shown in `/.well-known/x402` under `pausedEndpoints`). */
  reason?: string;
}

/** Seconds a paused resource's 503 asks a client to wait (the gate's `Retry-After`). */
export const PAUSED_RETRY_AFTER_SECONDS = 3600;

/**
 * Decides a resource's availability: what the operator sets (`RESOURCE_AVAILABILITY`), else what
 * the profile declares (default active); an active one not built, a need absent or planned, or the
 * finer `unavailable` test → paused with the reason.
 */
export function publicationOf(resource: AnyResource, env: ResourceEnvironment): Publication {
  const key = routeKey(resource);
  const paused = (reason: string): Publication => ({ resource, key, availability: 'paused', reason });
  const operator = operatorAvailability(resource, env.config);
  const declared = operator ?? resource.availability?.[env.config.profile] ?? 'active';
  if (declared !== 'active') {
    return {
      resource,
      key,
      availability: declared,
      reason: operator
        ? `${declared} by the operator (RESOURCE_AVAILABILITY)`
        : `${declared} in the ${env.config.profile} profile`,
    };
  }
  if (!isBuilt(resource)) return paused('not built yet');
  const missing = missingCapabilities(resource.needs, env.capabilities);
  if (missing.length > 0) {
    const why = missing.map((name) =>
      name in PLANNED_CAPABILITIES
        ? `${name} (${PLANNED_CAPABILITIES[name as keyof typeof PLANNED_CAPABILITIES]}, not built yet)`
        : `${name} (not configured)`,
    );
    return paused(`needs ${why.join(', ')}`);
  }
  const finer = resource.unavailable?.(env.capabilities);
  return finer ? paused(finer) : { resource, key, availability: 'active' };
}

export function outputOf(resource: AnyResource, env: ResourceEnvironment): z.ZodType {
  return typeof resource.output === 'function' ? resource.output(env) : resource.output;
}

/** Whether a price pattern (`/x/*`, `/x*`) covers a concrete path. */
export function patternCovers(pattern: string, path: string): boolean {
  const prefix = pattern.slice(0, pattern.indexOf('*'));
  return path.startsWith(prefix) || (pattern.endsWith('/*') && path === prefix.slice(0, -1));
}

/** What a paid route's precondition keeps on the request for its handler: the input it parsed. */
interface ParsedInput {
  resource: AnyResource;
  // biome-ignore lint/suspicious/noExplicitAny: the parsed shape is the resource's own
  input: ResourceInput<any>;
}

/** The input this resource's precondition parsed of the request, if it did. */
function parsedInputFor(context: RouteContext, resource: AnyResource): ResourceInput<never> | undefined {
  const parsed = context.parsedInput?.() as ParsedInput | undefined;
  return parsed?.resource === resource ? (parsed.input as ResourceInput<never>) : undefined;
}

/**
 * A paid resource's precondition in the gate (`RouteConfig.precondition`): asked once the gate
 * matched the request to the route (active, canonical) and before any challenge, the resource's
 * own precondition, its input validation and then whether it has anything to sell (`sellable`)
 * answer, so nobody signs for a request that cannot succeed. The match is the gate's, so encodings
 * and dot segments cannot skip it. The parsed input is kept on the request and handed to the
 * handler as it is: the input is validated and the body read once. Only a resource that takes a
 * body or asks `sellable` makes it asynchronous.
 */
function preconditionOf(resource: AnyResource, env: ResourceEnvironment): RouteConfig['precondition'] {
  // A canonical route's own rule (the gate's 400 non_canonical_request) has judged its target.
  const validates = resource.gate?.canonical !== true;
  const body = takesBody(resource);
  return (request, match) => {
    let id: string | undefined;
    const requestId = () => (id ??= requestIdOf((name) => request.header(name)));
    const early = resource.precondition?.(requestId(), env.capabilities);
    if (early) return toGateResponse(early);
    const query = match.target.query ?? '';
    if (!validates || (!resource.input && query === '')) return undefined;
    const incoming = incomingMessageOf(request.raw);
    const validate = (bytes: Buffer | undefined) => {
      const outcome = validateInput(resource, { params: match.params, query, body: bytes }, requestId(), env);
      if (!outcome.ok) return toGateResponse(outcome.result);
      if (incoming) keepParsedInput(incoming, { resource, input: outcome.input } satisfies ParsedInput);
      if (!resource.sellable) return undefined;
      return unsellable(resource, outcome.input, env, requestId()).then((refusal) =>
        refusal ? toGateResponse(refusal) : undefined,
      );
    };
    if (!body) return validate(undefined);
    // Every mount's adapter hands its request over; without one the gate answers 503 (fail closed).
    if (!incoming) throw new TypeError('the gate was given no Node request to read the body from');
    return readRequestBody(incoming).then(validate, (error: unknown) =>
      toGateResponse(bodyError(error, requestId())),
    );
  };
}

/**
 * The gate's routes: every paid resource with its price, discovery metadata, gate options and
 * availability, then the price patterns (active only while a built resource under them is, so
 * nobody is challenged for a path that cannot be served), with the bazaar extension in each
 * challenge and the payment-identifier extension on every paid route (a client that retries under
 * its identifier is answered from its first payment: docs/payment-identifier.md).
 */
export function buildRoutesConfig(
  publications: readonly Publication[],
  patterns: readonly PricePattern[],
  env: ResourceEnvironment,
  terms: Parameters<typeof acceptsOf>[0],
): RoutesConfig {
  const routes: RoutesConfig = {};
  for (const { resource, key, availability } of publications) {
    if (!isPaid(resource)) continue;
    const config: RouteConfig = {
      accepts: acceptsOf(terms, resource.price!.amount, resource.price!.maxTimeoutSeconds),
      description: resource.description,
      mimeType: 'application/json',
      availability,
      retryAfterSeconds: PAUSED_RETRY_AFTER_SECONDS,
      paymentIdentifier: true,
      ...(resource.gate?.canonical ? { canonical: true } : {}),
      ...(resource.gate?.settle ? { settle: resource.gate.settle } : {}),
      ...(resource.gate?.reserveBalance ? { reserveBalance: true } : {}),
      ...(resource.gate?.signIn ? { signIn: resource.gate.signIn } : {}),
      precondition: preconditionOf(resource, env),
      discovery: {
        ...resource.discovery,
        ...(resource.input ? { input: resource.input } : {}),
        output: outputOf(resource, env),
      },
    };
    routes[key] = config;
  }
  for (const pattern of patterns) {
    const served = publications.some(
      (p) =>
        isPaid(p.resource) && p.availability === 'active' && patternCovers(pattern.path, p.resource.path),
    );
    routes[pattern.path] = {
      accepts: acceptsOf(terms, pattern.amount, pattern.maxTimeoutSeconds),
      description: pattern.description,
      availability: served ? 'active' : 'paused',
      retryAfterSeconds: PAUSED_RETRY_AFTER_SECONDS,
      paymentIdentifier: true,
    };
  }
  return addBazaarExtensions(routes);
}

/** The OpenAPI entries of the free resources (the paid ones come from the route table). */
export function buildFreeOpenApiRoutes(
  publications: readonly Publication[],
  env: ResourceEnvironment,
): FreeRoute[] {
  return publications
    .filter(({ resource }) => !isPaid(resource))
    .map(({ resource }) => ({
      method: resource.method,
      path: resource.path,
      summary: resource.description,
      operationId: resource.discovery.operationId,
      tags: [resource.discovery.category],
      ...(resource.input ? { input: resource.input } : {}),
      output: outputOf(resource, env),
      errorStatuses: [
        ...new Set(Object.values<ErrorCodeSpec>(resource.errors).map((spec) => spec.status)),
      ].sort(),
    }));
}

/** One error code of the service with where it is answered. */
export interface ErrorCatalogEntry extends ErrorCodeSpec {
  code: string;
  /** Route keys that declare it; empty for the service's own codes (any route). */
  routes: string[];
}

/**
 * Every error code the service answers besides the gate's: the service's own, then each
 * resource's in registry order. @throws TypeError when two declarations give one code different specs
 */
export function buildErrorCatalog(resources: readonly AnyResource[]): ErrorCatalogEntry[] {
  const entries = new Map<string, ErrorCatalogEntry>();
  for (const [code, spec] of Object.entries(SERVICE_ERROR_CODES))
    entries.set(code, { code, ...spec, routes: [] });
  const problems: string[] = [];
  for (const resource of resources) {
    for (const [code, spec] of Object.entries<ErrorCodeSpec>(resource.errors)) {
      const known = entries.get(code);
      if (!known) {
        entries.set(code, { code, ...spec, routes: [routeKey(resource)] });
      } else if (known.status !== spec.status || known.retryable !== spec.retryable) {
        problems.push(`${routeKey(resource)} declares ${code} as ${spec.status}, already ${known.status}`);
      } else if (known.routes.length > 0) {
        known.routes.push(routeKey(resource));
      }
    }
  }
  if (problems.length > 0) throw new TypeError(`conflicting error codes: ${problems.join('; ')}`);
  return [...entries.values()];
}

/** The context a handler gets; the request id is read only when asked for (it may cost a UUID). */
class KitContext implements ResourceContext {
  constructor(
    readonly request: RouteContext,
    // biome-ignore lint/suspicious/noExplicitAny: the parsed shape is the resource's own
    readonly input: ResourceInput<any>,
    readonly capabilities: ResourceContext['capabilities'],
    readonly env: ResourceEnvironment,
    private readonly errors: Readonly<Record<string, ErrorCodeSpec>>,
  ) {}

  get requestId(): string {
    return this.request.requestId;
  }

  get payment(): PaidRequest | undefined {
    return this.request.payment;
  }

  /** An arrow property, so a handler may destructure it (`({ fail }) => …`). */
  readonly fail = (code: string, message?: string, headers?: Record<string, string>): RouteResult => {
    const spec = this.errors[code] ?? SERVICE_ERROR_CODES[code as ServiceErrorCode];
    return errorResult({
      status: spec?.status ?? 503,
      code,
      requestId: this.requestId,
      retryable: spec?.retryable ?? true,
      ...((message ?? spec?.description) ? { message: message ?? spec?.description } : {}),
      ...(headers ? { headers } : {}),
    });
  };
}

const NO_INPUT = Object.freeze({ params: {}, query: {}, body: {} });

/** The query string of a raw request target, without `?`. */
export function queryOf(target: string): string {
  const index = target.indexOf('?');
  return index < 0 ? '' : target.slice(index + 1);
}

/**
 * Runs a built resource's handler (created once here, for handlers that keep state) on a request
 * and its validated input: what its HTTP route and its MCP tool both call.
 */
export function resourceRunner(resource: AnyResource, env: ResourceEnvironment): ResourceRunner {
  let runners = RUNNERS.get(env);
  if (!runners) {
    runners = new Map();
    RUNNERS.set(env, runners);
  }
  let run = runners.get(resource);
  if (!run) {
    const handler: ResourceHandler<never, never, string> = resource.createHandler
      ? resource.createHandler(env)
      : resource.handler!;
    const errors = resource.errors as Record<string, ErrorCodeSpec>;
    run = (context, input) =>
      handler(new KitContext(context, input, env.capabilities as never, env, errors) as never);
    runners.set(resource, run);
  }
  return run;
}

/** A built resource's handler on a request and its validated input. */
export type ResourceRunner = (
  context: RouteContext,
  input: ResourceInput<never>,
) => RouteResult | Promise<RouteResult>;

/** The runners of each deployment: one handler per resource, shared by its route and its tool. */
const RUNNERS = new WeakMap<ResourceEnvironment, Map<AnyResource, ResourceRunner>>();

/**
 * The service routes of the resources: each built resource's handler behind its input validation
 * (a paid route's precondition parsed it before the challenge and hands it over; free resources,
 * and an MCP tool's request, are validated here first). A paused free resource answers 503;
 * paused paid ones never reach a route (the gate answers).
 */
export function buildResourceRoutes(
  publications: readonly Publication[],
  env: ResourceEnvironment,
): ServiceRoute[] {
  const routes: ServiceRoute[] = [];
  for (const { resource, availability, reason } of publications) {
    if (!isBuilt(resource)) continue;
    if (availability !== 'active') {
      if (!isPaid(resource)) {
        routes.push({
          method: resource.method,
          path: resource.path,
          handler: (context) =>
            errorResult({
              status: 503,
              code: 'resource_paused',
              requestId: context.requestId,
              retryable: true,
              message: `${routeKey(resource)} is paused: ${reason ?? 'by the operator'}`,
              headers: { 'retry-after': String(PAUSED_RETRY_AFTER_SECONDS) },
            }),
        });
      }
      continue;
    }
    const run = resourceRunner(resource, env);
    // A free resource without input ignores any query; a paid one refuses it (see validateInput).
    const validated = resource.input !== undefined || isPaid(resource);
    const body = takesBody(resource);
    routes.push({
      method: resource.method,
      path: resource.path,
      handler(context) {
        const parsed = parsedInputFor(context, resource);
        if (parsed) return run(context, parsed);
        // Most requests to a resource without input carry no query: no parsing at all.
        if (!validated && context.target.indexOf('?') < 0) return run(context, NO_INPUT as never);
        const validate = (raw: RawInput): RouteResult | Promise<RouteResult> => {
          const outcome = validateInput(resource, raw, context.requestId, env);
          return outcome.ok ? run(context, outcome.input as never) : outcome.result;
        };
        const params = context.params;
        const query = queryOf(context.target);
        if (!body) return validate({ params, query, body: undefined });
        return context.readBody().then(
          (bytes) => validate({ params, query, body: bytes }),
          (error: unknown) => bodyError(error, context.requestId),
        );
      },
    });
  }
  return routes;
}
